package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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

// subscriptionList returns n distinct resource URIs.
func subscriptionList(n int) []string {
	uris := make([]string, n)
	for i := range uris {
		uris[i] = "u" + strconv.Itoa(i)
	}
	return uris
}

// openListen opens a subscriptions/listen stream with the given resource
// subscriptions on the live server at addr. It returns the response, after
// the acknowledgement when the stream opened.
func openListen(t *testing.T, ctx context.Context, addr string, id int, uris []string, header http.Header) (*http.Response, *bufio.Reader) {
	t.Helper()
	c := call(id, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}})
	for k, v := range header {
		c.headers[k] = v
	}
	resp := post(t, ctx, "http://"+addr+"/mcp", c)
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
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
	return resp, br
}

// errorBody decodes a plain-JSON error response.
func errorBody(t *testing.T, resp *http.Response) *wireError {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var r response
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil {
		t.Fatalf("status %d: want a JSON-RPC error, got %q (%v)", resp.StatusCode, b, err)
	}
	return r.Error
}

// TestListenStreamMemory is the second row of issue 13: listen streams with
// long resourceSubscriptions lists. Heap per stream is measured with a
// list of the maximum size the server accepts.
func TestListenStreamMemory(t *testing.T) {
	const streams = 10
	s := newTestServer(t, nil)
	if err := s.AddResource(Resource{URI: "u0", Name: "u0"}, noopResource); err != nil {
		t.Fatal(err)
	}
	addr := liveServer(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	size := 350000
	before := measureMem()
	for i := range streams {
		resp, _ := openListen(t, ctx, addr, i+1, subscriptionList(size), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("listen %d: status %d", i+1, resp.StatusCode)
		}
	}
	after := measureMem()
	per := growth(before.heap, after.heap) / streams
	t.Logf("%d listen streams x %d subscriptions: heap %s -> %s (%s per stream), RSS %s -> %s",
		streams, size, mib(before.heap), mib(after.heap), mib(per), mib(before.rss), mib(after.rss))
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
	resp := post(t, context.Background(), "http://"+addr+"/mcp", toolCall(1, "slow", nil))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"text":"done"`) {
		t.Fatalf("status %d, body %s; want the tool's answer", resp.StatusCode, b)
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
