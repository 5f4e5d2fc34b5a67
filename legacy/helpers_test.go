package legacy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// waitLimit bounds every wait for something a test expects. It is a guard
// against hangs, never a pause: waits end as soon as the event arrives.
const waitLimit = 5 * time.Second

// quiet is how long a test watches for something that must NOT arrive. It
// only ever runs after a later marker proved the stream is live, or is
// short enough not to matter.
const quiet = 100 * time.Millisecond

const (
	modernVersion = "2026-07-28"
	legacyVersion = "2025-11-25"
	metaVersion   = "io.modelcontextprotocol/protocolVersion"
	metaCaps      = "io.modelcontextprotocol/clientCapabilities"
	metaInfo      = "io.modelcontextprotocol/serverInfo"
)

var testInfo = server.Implementation{Name: "baton-legacy-test", Version: "0.0.1"}

// newServer builds a server with a fixed key ring, logging advertised and
// a discarding logger.
func newServer(tb testing.TB) *server.Server {
	tb.Helper()
	return newServerWith(tb, nil)
}

// newServerWith is newServer with options adjusted by mutate.
func newServerWith(tb testing.TB, mutate func(*server.Options)) *server.Server {
	tb.Helper()
	return newLegacyServer(tb, nil, mutate)
}

// handlers maps each test server to its legacy handler, for fixtures and
// tests that count sessions.
var handlers sync.Map // *server.Server → *legacy.Handler

// newLegacyServer is a test server whose legacy handler has options lopts,
// with server options adjusted by mutate.
func newLegacyServer(tb testing.TB, lopts *legacy.Options, mutate func(*server.Options)) *server.Server {
	tb.Helper()
	h := legacy.New(lopts)
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte("baton-legacy-test-secret-0123456789abcdef")})
	if err != nil {
		tb.Fatalf("NewKeyRing: %v", err)
	}
	o := server.Options{
		StateKeys: ring,
		Logging:   true,
		Logger:    slog.New(slog.DiscardHandler),
		Legacy:    h,
	}
	if mutate != nil {
		mutate(&o)
	}
	srv, err := server.New(testInfo, &o)
	if err != nil {
		tb.Fatalf("server.New: %v", err)
	}
	handlers.Store(srv, h)
	tb.Cleanup(func() { handlers.Delete(srv) })
	return srv
}

// settle waits until srv's legacy handler has handed every change made so
// far to the sessions that exist (see Handler.Settle): a session opened
// afterwards gets only the changes made after it. Without it, a tool
// registered before a session may announce itself on that session's
// stream, whenever the watcher goroutine gets to it.
func settle(tb testing.TB, srv *server.Server) {
	tb.Helper()
	v, ok := handlers.Load(srv)
	if !ok {
		tb.Fatal("settle: the server was not made by newServer or newLegacyServer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := v.(*legacy.Handler).Settle(ctx); err != nil {
		tb.Fatalf("the legacy handler did not catch up with the server's changes: %v", err)
	}
}

func addTool(tb testing.TB, srv *server.Server, name string, h server.ToolHandler) {
	tb.Helper()
	if err := srv.AddTool(server.Tool{Name: name, Description: name}, h); err != nil {
		tb.Fatalf("AddTool(%s): %v", name, err)
	}
}

// fixture is a server with a legacy handler behind a live HTTP listener on
// 127.0.0.1.
type fixture struct {
	srv *server.Server
	h   *legacy.Handler
	ts  *httptest.Server
}

// handlerOf returns the legacy handler of a server from newServer or
// newLegacyServer.
func handlerOf(tb testing.TB, srv *server.Server) *legacy.Handler {
	tb.Helper()
	v, ok := handlers.Load(srv)
	if !ok {
		tb.Fatal("the server was not made by newServer or newLegacyServer")
	}
	return v.(*legacy.Handler)
}

// newFixture serves srv (from newServer or newLegacyServer; tools
// registered already or later) on 127.0.0.1:0. Cleanup closes the legacy
// handler first, so that parked calls and GET streams end, then the
// listener.
func newFixture(tb testing.TB, srv *server.Server) *fixture {
	tb.Helper()
	return newFixtureWith(tb, srv, nil)
}

// newFixtureWith is newFixture with the server's handler wrapped (for
// example by authentication middleware).
func newFixtureWith(tb testing.TB, srv *server.Server, wrap func(http.Handler) http.Handler) *fixture {
	tb.Helper()
	v, ok := handlers.Load(srv)
	if !ok {
		tb.Fatal("newFixture: the server was not made by newServer or newLegacyServer")
	}
	h := v.(*legacy.Handler)
	var handler http.Handler = srv
	if wrap != nil {
		handler = wrap(handler)
	}
	ts := httptest.NewServer(handler)
	tb.Cleanup(func() {
		h.Close()
		ts.CloseClientConnections()
		ts.Close()
	})
	return &fixture{srv: srv, h: h, ts: ts}
}

// rpcError is a JSON-RPC error object as received.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// message is any JSON-RPC message as received.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
	raw     []byte
}

func (m message) isRequest() bool      { return m.Method != "" && m.ID != nil }
func (m message) isNotification() bool { return m.Method != "" && m.ID == nil }
func (m message) isResponse() bool     { return m.Method == "" && (m.Result != nil || m.Error != nil) }

func parseMessage(tb testing.TB, b []byte) message {
	tb.Helper()
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("not a JSON-RPC message: %v\n%s", err, b)
	}
	if m.JSONRPC != "2.0" {
		tb.Fatalf("jsonrpc = %q, want 2.0: %s", m.JSONRPC, b)
	}
	m.raw = append([]byte(nil), b...)
	return m
}

func decodeMap(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return b
}

// wireLog keeps every byte the test clients received from the server.
type wireLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *wireLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *wireLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// stream is the response to one POST or GET: its messages in order, read
// incrementally from SSE (or the single JSON body).
type stream struct {
	tb       testing.TB
	resp     *http.Response
	status   int
	ctype    string
	msgs     chan message
	comments atomic.Int32
	cancel   context.CancelFunc
}

// read parses the body in the background. SSE comments are counted; the
// channel closes when the body ends.
func (s *stream) read(log io.Writer) {
	s.msgs = make(chan message, 64)
	body := io.TeeReader(s.resp.Body, log)
	go func() {
		defer close(s.msgs)
		if !strings.HasPrefix(s.ctype, "text/event-stream") {
			b, _ := io.ReadAll(body)
			if len(bytes.TrimSpace(b)) > 0 {
				var m message
				if json.Unmarshal(b, &m) == nil {
					m.raw = b
					s.msgs <- m
				}
			}
			return
		}
		br := bufio.NewReader(body)
		var data []byte
		event := ""
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if data != nil {
					var m message
					if event != "" && event != "message" {
						m.Method = "<bad SSE event name " + event + ">"
					} else if json.Unmarshal(data, &m) != nil {
						m.Method = "<bad SSE data " + string(data) + ">"
					}
					m.raw = data
					s.msgs <- m
				}
				data, event = nil, ""
			case strings.HasPrefix(line, ":"):
				s.comments.Add(1)
			case strings.HasPrefix(line, "event:"):
				event = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				d := strings.TrimPrefix(line[len("data:"):], " ")
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, d...)
			}
		}
	}()
}

// next returns the next message, failing when the stream ends or nothing
// arrives within waitLimit.
func (s *stream) next() message {
	s.tb.Helper()
	select {
	case m, ok := <-s.msgs:
		if !ok {
			s.tb.Fatal("stream ended; want another message")
		}
		if strings.HasPrefix(m.Method, "<bad") {
			s.tb.Fatalf("malformed SSE event: %s", m.Method)
		}
		return m
	case <-time.After(waitLimit):
		s.tb.Fatal("no message on the stream within the wait limit")
	}
	return message{}
}

// nextRequest returns the next message and checks it is a server-to-client
// request for method.
func (s *stream) nextRequest(method string) message {
	s.tb.Helper()
	m := s.next()
	if !m.isRequest() || m.Method != method {
		s.tb.Fatalf("want a %s request, got %s", method, m.raw)
	}
	return m
}

// result returns the next message, checking it is the successful response
// to id (JSON text).
func (s *stream) result(id string) json.RawMessage {
	s.tb.Helper()
	m := s.next()
	if !m.isResponse() || string(m.ID) != id {
		s.tb.Fatalf("want the response to %s, got %s", id, m.raw)
	}
	if m.Error != nil {
		s.tb.Fatalf("response to %s is error %d: %s", id, m.Error.Code, m.Error.Message)
	}
	return m.Result
}

// rpcErr returns the next message, checking it is an error response to id.
func (s *stream) rpcErr(id string) *rpcError {
	s.tb.Helper()
	m := s.next()
	if !m.isResponse() || string(m.ID) != id || m.Error == nil {
		s.tb.Fatalf("want an error response to %s, got %s", id, m.raw)
	}
	return m.Error
}

// end waits for the stream to close and returns the messages that still
// arrived.
func (s *stream) end() []message {
	s.tb.Helper()
	var rest []message
	deadline := time.After(waitLimit)
	for {
		select {
		case m, ok := <-s.msgs:
			if !ok {
				return rest
			}
			rest = append(rest, m)
		case <-deadline:
			s.tb.Fatal("stream did not end within the wait limit")
			return rest
		}
	}
}

// none asserts that no message arrives for a short while.
func (s *stream) none(what string) {
	s.tb.Helper()
	select {
	case m, ok := <-s.msgs:
		if ok {
			s.tb.Fatalf("%s: unexpected message %s", what, m.raw)
		}
	case <-time.After(quiet):
	}
}

// close abandons the stream (closes the connection).
func (s *stream) close() {
	s.cancel()
	_ = s.resp.Body.Close()
}

// wireClient is a small 2025-11-25 Streamable HTTP client.
type wireClient struct {
	tb      testing.TB
	url     string
	sid     string
	version string
	log     *wireLog
}

// newClient returns a client without a session. It settles the server
// first, so that the session it opens gets only the changes made after.
func newClient(tb testing.TB, f *fixture) *wireClient {
	tb.Helper()
	settle(tb, f.srv)
	return &wireClient{tb: tb, url: f.ts.URL + "/mcp", log: &wireLog{}}
}

// do sends one HTTP request with the session headers (if any) and returns
// the stream reading its response. Cleanup closes it.
func (c *wireClient) do(method string, body []byte, hdr map[string]string) *stream {
	c.tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequestWithContext(ctx, method, c.url, rd)
	if err != nil {
		cancel()
		c.tb.Fatalf("NewRequest: %v", err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
	}
	if c.sid != "" {
		r.Header.Set(server.HeaderSessionID, c.sid)
	}
	if c.version != "" {
		r.Header.Set(server.HeaderProtocolVersion, c.version)
	}
	for k, v := range hdr {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		cancel()
		c.tb.Fatalf("%s: %v", method, err)
	}
	s := &stream{tb: c.tb, resp: resp, status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), cancel: cancel}
	c.tb.Cleanup(s.close)
	s.read(c.log)
	return s
}

// request POSTs a JSON-RPC request; id is any JSON-marshalable id.
func (c *wireClient) request(id any, method string, params any) *stream {
	c.tb.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	return c.do(http.MethodPost, mustJSON(c.tb, msg), nil)
}

// call POSTs a request and returns the successful result of a plain or SSE
// response with no messages before it.
func (c *wireClient) call(id any, method string, params any) json.RawMessage {
	c.tb.Helper()
	s := c.request(id, method, params)
	if s.status != http.StatusOK {
		c.tb.Fatalf("%s: HTTP %d", method, s.status)
	}
	return s.result(string(mustJSON(c.tb, id)))
}

// post202 POSTs a notification or a response and checks it is accepted
// with 202 and an empty body.
func (c *wireClient) post202(msg any) {
	c.tb.Helper()
	s := c.do(http.MethodPost, mustJSON(c.tb, msg), nil)
	if s.status != http.StatusAccepted {
		c.tb.Fatalf("POST %s: HTTP %d, want 202", mustJSON(c.tb, msg), s.status)
	}
	if rest := s.end(); len(rest) > 0 {
		c.tb.Fatalf("202 with a body: %s", rest[0].raw)
	}
}

func (c *wireClient) notify(method string, params any) {
	c.tb.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.post202(msg)
}

// answer POSTs the client's result for a server-to-client request.
func (c *wireClient) answer(req message, result any) {
	c.tb.Helper()
	c.post202(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
}

// answerError POSTs the client's error for a server-to-client request.
func (c *wireClient) answerError(req message, code int, msg string) {
	c.tb.Helper()
	c.post202(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": code, "message": msg}})
}

// get opens the session's GET stream.
func (c *wireClient) get(accept string) *stream {
	c.tb.Helper()
	return c.do(http.MethodGet, nil, map[string]string{"Accept": accept})
}

func initParams(version, caps string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    json.RawMessage(caps),
		"clientInfo":      map[string]any{"name": "legacy-test-client", "version": "1.0.0"},
	}
}

// connect performs the handshake (initialize without MCP-Protocol-Version,
// then notifications/initialized) declaring caps, and returns the client
// bound to the new session.
func connect(tb testing.TB, f *fixture, caps string) *wireClient {
	tb.Helper()
	c := newClient(tb, f)
	s := c.request(0, "initialize", initParams(legacyVersion, caps))
	if s.status != http.StatusOK {
		tb.Fatalf("initialize: HTTP %d", s.status)
	}
	res := decodeMap(tb, s.result("0"))
	c.sid = s.resp.Header.Get(server.HeaderSessionID)
	if c.sid == "" {
		tb.Fatal("initialize: no Mcp-Session-Id")
	}
	c.version, _ = res["protocolVersion"].(string)
	c.notify("notifications/initialized", nil)
	return c
}

// toolCall returns tools/call params.
func toolCall(name string, args any) map[string]any {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	return p
}

// toolText returns the text of a tool result and its isError flag.
func toolText(tb testing.TB, raw json.RawMessage) (string, bool) {
	tb.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Content == nil {
		tb.Fatalf("not a tool result: %s", raw)
	}
	var sb strings.Builder
	for _, b := range r.Content {
		sb.WriteString(b.Text)
	}
	return sb.String(), r.IsError
}

// legacyShape asserts a legacy-era result has none of the 2026-07-28
// members.
func legacyShape(tb testing.TB, what string, raw json.RawMessage) map[string]any {
	tb.Helper()
	m := decodeMap(tb, raw)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope", "_meta"} {
		if _, ok := m[k]; ok {
			tb.Errorf("%s result carries %q (2026-07-28 only): %s", what, k, raw)
		}
	}
	return m
}

// nameSchema is a form with one required string "name".
func nameSchema(tb testing.TB) *elicit.Schema {
	tb.Helper()
	s, err := elicit.NewSchema(elicit.String("name").Required())
	if err != nil {
		tb.Fatalf("NewSchema: %v", err)
	}
	return s
}

func form(tb testing.TB, message string, fields ...*elicit.Field) *elicit.Request {
	tb.Helper()
	r, err := elicit.NewForm(message, fields...)
	if err != nil {
		tb.Fatalf("NewForm: %v", err)
	}
	return r
}

// outcome is what a blocking tool handler saw.
type outcome struct {
	err     error
	ctxErr  error
	elapsed time.Duration
	res     any
}

// recv waits for a value on ch within waitLimit.
func recv[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		tb.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// params decodes a message's params into a map.
func params(tb testing.TB, m message) map[string]any {
	tb.Helper()
	if m.Params == nil {
		return nil
	}
	return decodeMap(tb, m.Params)
}

// modernPost sends a 2026-07-28 request (with the _meta envelope and the
// MCP headers) to the fixture's endpoint and returns status and message.
func modernPost(tb testing.TB, f *fixture, id any, method string, p map[string]any, caps string) (int, message) {
	tb.Helper()
	if p == nil {
		p = map[string]any{}
	}
	p["_meta"] = map[string]any{metaVersion: modernVersion, metaCaps: json.RawMessage(caps)}
	body := mustJSON(tb, map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	r, err := http.NewRequest(http.MethodPost, f.ts.URL+"/mcp", bytes.NewReader(body))
	if err != nil {
		tb.Fatalf("NewRequest: %v", err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(server.HeaderProtocolVersion, modernVersion)
	r.Header.Set(server.HeaderMethod, method)
	if n, ok := p["name"].(string); ok {
		r.Header.Set(server.HeaderName, n)
	} else if u, ok := p["uri"].(string); ok {
		r.Header.Set(server.HeaderName, u)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		tb.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	if resp.Header.Get(server.HeaderSessionID) != "" {
		tb.Errorf("a modern response carries %s", server.HeaderSessionID)
	}
	s := &stream{tb: tb, resp: resp, ctype: resp.Header.Get("Content-Type"), cancel: func() {}}
	s.read(io.Discard)
	return resp.StatusCode, s.next()
}

// textResource registers a text resource.
func textResource(tb testing.TB, srv *server.Server, uri, text string) {
	tb.Helper()
	err := srv.AddResource(server.Resource{URI: uri, Name: uri}, func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
		return &server.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(uri, "text/plain", text)}}, nil
	})
	if err != nil {
		tb.Fatalf("AddResource: %v", err)
	}
}
