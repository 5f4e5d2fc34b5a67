package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

// memStats is what a memory test reports: the live heap after a
// collection, and the process's resident set (Linux; 0 elsewhere).
type memStats struct {
	heap uint64
	rss  uint64
}

func measureMem() memStats {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memStats{heap: ms.HeapAlloc, rss: residentSet()}
}

// residentSet reads VmRSS from /proc/self/status, in bytes.
func residentSet() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// growth is after minus before, or 0.
func growth(before, after uint64) uint64 {
	if after < before {
		return 0
	}
	return after - before
}

// liveServer serves h on a loopback port with a bare http.Server (no
// timeouts of its own, so the server's own limits are what is tested) and
// returns its address; it is closed when the test ends.
func liveServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// waitingBody signals on waiting each time the handler reads the body
// again after it has received some of it: the handler is then blocked
// waiting for bytes that do not come.
type waitingBody struct {
	io.ReadCloser
	got     int
	once    sync.Once
	waiting chan<- struct{}
}

func (b *waitingBody) Read(p []byte) (int, error) {
	if b.got > 0 {
		b.once.Do(func() { b.waiting <- struct{}{} })
	}
	n, err := b.ReadCloser.Read(p)
	b.got += n
	return n, err
}

// stallBodies opens n connections that each send the headers of a POST
// declaring a 4 MiB body and then one byte of it, and waits until the
// server's handler of every one is waiting for the rest.
func stallBodies(t *testing.T, addr string, n int, waiting <-chan struct{}) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			_ = c.Close()
		}
	})
	head := "POST /mcp HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\nContent-Length: 4194304\r\n\r\n{"
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
	}
	timeout := time.After(waitLimit)
	for i := range n {
		select {
		case <-waiting:
		case <-timeout:
			t.Fatalf("only %d of %d handlers are waiting for their body", i, n)
		}
	}
	return conns
}

// TestStalledBodiesCostWhatArrived is the first row of issue 13: 150
// connections declare a 4 MiB body and send one byte. The server reads a
// body as it arrives, so each costs what it sent (plus net/http's own
// buffers), not what it declared.
func TestStalledBodiesCostWhatArrived(t *testing.T) {
	const n = 150
	s := newTestServer(t, nil)
	waiting := make(chan struct{}, n)
	addr := liveServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = &waitingBody{ReadCloser: r.Body, waiting: waiting}
		s.ServeHTTP(w, r)
	}))
	before := measureMem()
	stallBodies(t, addr, n, waiting)
	after := measureMem()
	perConn := growth(before.heap, after.heap) / n
	t.Logf("%d stalled 4 MiB bodies: heap %s -> %s (%d KiB per connection), RSS %s -> %s",
		n, mib(before.heap), mib(after.heap), perConn>>10, mib(before.rss), mib(after.rss))
	// net/http's per-connection buffers and the handler's first buffer
	// are a few KiB; the declared 4 MiB must not be allocated.
	if perConn > 256<<10 {
		t.Errorf("each stalled body costs %d KiB of heap; it must cost what arrived, not the declared 4 MiB", perConn>>10)
	}
}

// subscriptionList returns n distinct resource URIs of about size bytes
// each.
func subscriptionList(n, size int) []string {
	uris := make([]string, n)
	for i := range uris {
		u := "file:///srv/project/" + strconv.Itoa(i) + "/"
		uris[i] = u + strings.Repeat("x", max(0, size-len(u)))
	}
	return uris
}

// openListen opens a subscriptions/listen stream with the given resource
// subscriptions on the live server at addr, as principal user when not
// empty (see principalFromHeader), on a connection of its own that the
// stream keeps until ctx ends or the test does. It returns the response,
// read past the acknowledgement when the stream opened. The request is
// written on a bare connection and then dropped, so the client side keeps
// nothing of it (the memory tests measure the server).
func openListen(t *testing.T, ctx context.Context, addr string, id int, uris []string, user string) *http.Response {
	t.Helper()
	req := listenRequest(t, "http://"+addr+"/mcp", id, uris, user)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	t.Cleanup(func() {
		stop()
		conn.Close()
	})
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("listen %d: %v", id, err)
	}
	if resp.StatusCode == http.StatusOK {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("listen %d: no acknowledgement: %v", id, err)
			}
			if strings.Contains(line, "notifications/subscriptions/acknowledged") {
				break
			}
		}
	}
	return resp
}

// listenRequest returns a subscriptions/listen request to url with the
// given resource subscriptions, as principal user when not empty. It is
// written out by hand (not through mcptest) because the memory tests
// write it on a bare connection and keep nothing of the client side.
func listenRequest(t *testing.T, url string, id int, uris []string, user string) *http.Request {
	t.Helper()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": map[string]any{
		"notifications": map[string]any{"resourceSubscriptions": uris},
		"_meta":         map[string]any{metaProtocolVersion: testVersion, metaClientCaps: map[string]any{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(headerProtocolVersion, testVersion)
	req.Header.Set(headerMethod, "subscriptions/listen")
	if user != "" {
		req.Header.Set("X-User", user)
	}
	return req
}

// principalFromHeader makes X-User the request's principal.
func principalFromHeader(s *Server) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if u := r.Header.Get("X-User"); u != "" {
			ctx = ContextWithPrincipal(ctx, u)
		}
		s.ServeHTTP(w, r.WithContext(ctx))
	})
}

// errorBody reads, closes and decodes a plain-JSON error response.
func errorBody(t *testing.T, resp *http.Response) *mcptest.Error {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Error *mcptest.Error `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil {
		t.Fatalf("status %d: want a JSON-RPC error, got %q (%v)", resp.StatusCode, b, err)
	}
	return r.Error
}

// TestListenStreamMemory is the second row of issue 13: listen streams with
// long resourceSubscriptions lists. The 350,000-URI list of the report is
// refused, and the heap of ten open streams with lists of the largest size
// accepted (1000 URIs; 256 KiB of them in the worst case) is measured.
func TestListenStreamMemory(t *testing.T) {
	const streams = 10
	s := newTestServer(t, nil)
	if err := s.AddResource(Resource{URI: "file:///srv/project/0/", Name: "r"}, noopResource); err != nil {
		t.Fatal(err)
	}
	addr := liveServer(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	huge := make([]string, 350000)
	for i := range huge {
		huge[i] = "u" + strconv.Itoa(i)
	}
	before := measureMem()
	for i := range streams {
		resp := openListen(t, ctx, addr, i+1, huge, "")
		e := errorBody(t, resp)
		if resp.StatusCode != http.StatusBadRequest || e.Code != -32602 || !strings.Contains(e.Message, "350000 URIs, over this server's limit of 1000") {
			t.Fatalf("350,000 subscriptions: status %d, error %d %q; want 400, -32602 naming the limit", resp.StatusCode, e.Code, e.Message)
		}
	}
	after := measureMem()
	runtime.KeepAlive(huge)
	t.Logf("%d listens x 350000 subscriptions, refused: heap %s -> %s", streams, mib(before.heap), mib(after.heap))
	if g := growth(before.heap, after.heap); g > 8<<20 {
		t.Errorf("refused listens left %s on the heap", mib(g))
	}

	for _, size := range []int{48, 256} {
		ctx, cancel := context.WithCancel(context.Background())
		before := measureMem()
		for i := range streams {
			if resp := openListen(t, ctx, addr, 100+i, subscriptionList(1000, size), ""); resp.StatusCode != http.StatusOK {
				t.Fatalf("listen with 1000 subscriptions: status %d", resp.StatusCode)
			}
		}
		if n := s.hub.count(); n != streams {
			t.Fatalf("%d listeners open, want %d", n, streams)
		}
		after := measureMem()
		per := growth(before.heap, after.heap) / streams
		t.Logf("%d listen streams x 1000 subscriptions of %d bytes: heap %s -> %s, %d KiB per stream",
			streams, size, mib(before.heap), mib(after.heap), per>>10)
		// 1000 URIs (at most 256 KiB), their map, and the connection.
		if per > 1<<20 {
			t.Errorf("a stream with 1000 subscriptions of %d bytes holds %d KiB", size, per>>10)
		}
		cancel()
		waitFor(t, "the streams to close", func() bool { return s.hub.count() == 0 })
	}
}

// waitFor polls cond until it holds, or fails the test after waitLimit.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestListenLimits: the per-stream subscription caps, and the caps on open
// streams per server and per principal (per client address when
// anonymous), each with its status and error.
func TestListenLimits(t *testing.T) {
	s := newTestServer(t, &Options{MaxListenSubscriptions: 3, MaxListenStreams: 4, MaxListenStreamsPerPrincipal: 2})
	if err := s.AddResource(Resource{URI: "file:///a", Name: "a"}, noopResource); err != nil {
		t.Fatal(err)
	}
	addr := liveServer(t, principalFromHeader(s))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	refused := func(resp *http.Response, status, code int, msg string) {
		t.Helper()
		e := errorBody(t, resp)
		if resp.StatusCode != status || e.Code != code || !strings.Contains(e.Message, msg) {
			t.Errorf("status %d, error %d %q; want %d, %d with %q", resp.StatusCode, e.Code, e.Message, status, code, msg)
		}
	}
	refused(openListen(t, ctx, addr, 1, []string{"a", "b", "c", "d"}, ""), 400, -32602, "lists 4 URIs, over this server's limit of 3 per stream")
	refused(openListen(t, ctx, addr, 2, []string{strings.Repeat("u", 300<<10)}, ""), 400, -32602, "over this server's limit of 262144 per stream")

	for i, user := range []string{"", "", "alice", "alice"} {
		if resp := openListen(t, ctx, addr, 10+i, []string{"a", "b", "c"}, user); resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d (%q): status %d", i, user, resp.StatusCode)
		}
	}
	refused(openListen(t, ctx, addr, 20, nil, ""), 429, -32600, "this client address has its limit of 2 open")
	refused(openListen(t, ctx, addr, 21, nil, "alice"), 429, -32600, "this principal has its limit of 2 open")
	refused(openListen(t, ctx, addr, 22, nil, "bob"), 503, -32603, "this server has its limit of 4 open")
	if n := s.hub.count(); n != 4 {
		t.Fatalf("%d listeners open, want 4", n)
	}
	cancel()
	waitFor(t, "the streams to close", func() bool { return s.hub.count() == 0 })
	// Closed streams give their places back.
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for i := range 2 {
		if resp := openListen(t, ctx2, addr, 30+i, nil, "alice"); resp.StatusCode != http.StatusOK {
			t.Fatalf("after the others closed, stream %d: status %d", i, resp.StatusCode)
		}
	}
}

// TestStalledBodyIsCut: a body that stops arriving is answered 408 once
// Options.BodyReadTimeout has passed, and the connection is closed.
func TestStalledBodyIsCut(t *testing.T) {
	s := newTestServer(t, &Options{BodyReadTimeout: 50 * time.Millisecond})
	textTool(s, t, "t", "ok")
	addr := liveServer(t, s)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(waitLimit)) // a guard against a hang
	// Both a short declared body (which net/http would drain after the
	// handler) and a long one must be cut.
	for _, declared := range []int{100, 4 << 20} {
		if declared == 4<<20 {
			c.Close()
			if c, err = net.Dial("tcp", addr); err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(waitLimit))
		}
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", addr, declared)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("declared %d: no response to a stalled body: %v", declared, err)
		}
		e := errorBody(t, resp)
		if resp.StatusCode != http.StatusRequestTimeout || e.Code != -32600 || !strings.Contains(e.Message, "not received within 50ms") {
			t.Errorf("declared %d: status %d, error %d %q; want 408, -32600 naming the timeout", declared, resp.StatusCode, e.Code, e.Message)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Errorf("declared %d: the connection stays open after a cut body", declared)
		}
	}
}

// TestBodyDeadlineSparesLongResponses: the body deadline ends with the
// body; a call that answers later than it still gets its answer.
func TestBodyDeadlineSparesLongResponses(t *testing.T) {
	s := newTestServer(t, &Options{BodyReadTimeout: 20 * time.Millisecond})
	release := make(chan struct{})
	mustAddTool(t, s, Tool{Name: "slow"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		select {
		case <-release:
			return TextResult("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	addr := liveServer(t, s)
	// Release the tool well after the body deadline would have passed.
	timer := time.AfterFunc(200*time.Millisecond, func() { close(release) })
	defer timer.Stop()
	res, err := newClientOpts(t, mcptest.URL("http://"+addr+"/mcp", nil), nil).CallTool(testContext(t), "slow", nil)
	if err != nil || res.Text() != "done" || res.Exchange.Rounds[0].Status != http.StatusOK {
		t.Fatalf("%v %+v; want the tool's answer", err, res)
	}
}

// TestReadLimited covers the body reader's ends: a body of exactly its
// declared length, a longer one without a declared length, and max.
func TestReadLimited(t *testing.T) {
	body := strings.Repeat("x", 3*firstBodyBuffer+7)
	for _, tc := range []struct {
		name     string
		body     string
		declared int64
		max      int64
		err      bool
	}{
		{"empty", "", 0, 100, false},
		{"declared small", "hello", 5, 100, false},
		{"declared large", body, int64(len(body)), 1 << 20, false},
		{"undeclared large", body, -1, 1 << 20, false},
		{"exactly max", body, -1, int64(len(body)), false},
		{"over max", body, -1, int64(len(body)) - 1, true},
		{"longer than declared", body, 10, 1 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := io.LimitReader(strings.NewReader(tc.body), tc.max)
			var src io.Reader = rd
			if tc.err {
				src = &maxReader{r: strings.NewReader(tc.body), left: tc.max}
			}
			got, err := readLimited(iotestHalf{src}, tc.declared, tc.max)
			if tc.err {
				if err == nil {
					t.Fatalf("read %d bytes, want an error over max", len(got))
				}
				return
			}
			if err != nil || string(got) != tc.body {
				t.Fatalf("got %d bytes, %v; want the %d-byte body", len(got), err, len(tc.body))
			}
			if int64(cap(got)) > 2*int64(len(tc.body))+firstBodyBuffer {
				t.Errorf("buffer capacity %d for a %d-byte body", cap(got), len(got))
			}
		})
	}
}

// iotestHalf returns at most half of each read's space, as a slow peer.
type iotestHalf struct{ r io.Reader }

func (h iotestHalf) Read(p []byte) (int, error) { return h.r.Read(p[:(len(p)+1)/2]) }

// maxReader fails past left bytes, as http.MaxBytesReader does.
type maxReader struct {
	r    io.Reader
	left int64
}

func (m *maxReader) Read(p []byte) (int, error) {
	if m.left <= 0 {
		return 0, fmt.Errorf("over the limit")
	}
	if int64(len(p)) > m.left {
		p = p[:m.left+1]
	}
	n, err := m.r.Read(p)
	m.left -= int64(n)
	if m.left < 0 {
		return n, fmt.Errorf("over the limit")
	}
	return n, err
}

// clockAt is a settable clock for Options.Now.
type clockAt struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clockAt) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clockAt) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestPeerCausedLogLinesAreLimited is the last part of issue 13's answers
// row: every oversized recorded answer wrote an ERROR line. A peer sending
// 100 of them now gets the server to write a burst of 10 lines; the next
// line after a pause says how many were dropped.
func TestPeerCausedLogLinesAreLimited(t *testing.T) {
	clock := &clockAt{t: time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)}
	logs := &syncBuffer{}
	s := newTestServer(t, &Options{MaxStateSize: 4096, Now: clock.now, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	form := confirmForm(t, "x")
	name := elicitString(t)
	mustAddTool(t, s, Tool{Name: "ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.CreateFormElicitation(ctx, "Your name?", name); err != nil {
			return nil, err
		}
		if _, err := req.CreateFormElicitation(ctx, "Sure?", form.RequestedSchema); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	})
	c := newClient(t, s, formCaps)
	r1 := wantInputRequired(t, sendTool(t, c, "ask", nil), "baton:0")
	big := map[string]any{"baton:0": map[string]any{"action": "accept", "content": map[string]any{"name": strings.Repeat("n", 6000)}}}
	flood := func(n int) {
		for range n {
			e := wantError(t, sendTool(t, c, "ask", nil, mcptest.Resume(r1.RequestState, big)), 200, -32603)
			if !strings.Contains(e.Message, "4096-byte limit") {
				t.Fatalf("message %q", e.Message)
			}
		}
	}
	lines := func() int { return strings.Count(logs.String(), `msg="suspend call"`) }
	flood(100)
	if n := lines(); n != logBurst {
		t.Fatalf("100 oversized answers wrote %d ERROR lines, want the burst of %d:\n%s", n, logBurst, logs.String())
	}
	clock.advance(3 * logRefill)
	flood(5)
	if n := lines(); n != logBurst+3 {
		t.Fatalf("after %v, 5 more wrote %d lines in all, want %d", 3*logRefill, n, logBurst+3)
	}
	if !strings.Contains(logs.String(), "suppressed=90") {
		t.Errorf("no line says how many were dropped:\n%s", logs.String())
	}
}

// elicitString is a form with one free-text field "name".
func elicitString(t *testing.T) *elicit.Schema {
	t.Helper()
	s, err := elicit.NewSchema(elicit.String("name"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}
