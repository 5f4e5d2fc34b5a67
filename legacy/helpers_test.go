package legacy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
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

var testInfo = mcp.Implementation{Name: "baton-legacy-test", Version: "0.0.1"}

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
var handlers sync.Map // *server.Server → *legacy.Adapter

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
// far to the sessions that exist (see adapter.Settle): a session opened
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
	if err := v.(*legacy.Adapter).Settle(ctx); err != nil {
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
	h   *legacy.Adapter
	ts  *httptest.Server
}

// handlerOf returns the legacy handler of a server from newServer or
// newLegacyServer.
func handlerOf(tb testing.TB, srv *server.Server) *legacy.Adapter {
	tb.Helper()
	v, ok := handlers.Load(srv)
	if !ok {
		tb.Fatal("the server was not made by newServer or newLegacyServer")
	}
	return v.(*legacy.Adapter)
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
	h := v.(*legacy.Adapter)
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

// The wire client below is a thin layer over mcptest's 2025-11-25 client:
// mcptest builds the requests, the session headers and the handshake, and
// reads the streams; these helpers keep the tests' step-by-step shape
// (next message, answer late, watch a stream stay quiet) and let a test
// set the session id or version by hand where the bytes are the point.

// message is any JSON-RPC message as received; rpcError is an error
// response's error.
type (
	message  = mcptest.Message
	rpcError = mcptest.Error
)

// parseMessage reads a message from a transport mcptest does not speak
// (stdio).
func parseMessage(tb testing.TB, b []byte) message {
	tb.Helper()
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   *mcptest.Error  `json:"error"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("not a JSON-RPC message: %v\n%s", err, b)
	}
	if m.JSONRPC != "2.0" {
		tb.Fatalf("jsonrpc = %q, want 2.0: %s", m.JSONRPC, b)
	}
	return message{ID: m.ID, Method: m.Method, Params: m.Params, Result: m.Result, Error: m.Error, Raw: bytes.Clone(b)}
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

// wireLog keeps every message the test clients received from the server.
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
// in the background from an mcptest.Stream.
type stream struct {
	tb     testing.TB
	ms     *mcptest.Stream
	status int
	ctype  string
	header http.Header
	msgs   chan message
}

// read moves the messages into s.msgs (a malformed one as a message whose
// Method says so), logging each; the channel closes when the body ends.
func (s *stream) read(log io.Writer) {
	s.msgs = make(chan message, 64)
	go func() {
		defer close(s.msgs)
		for {
			m, err := s.ms.Next(context.Background())
			switch {
			case errors.Is(err, io.EOF):
				return
			case err != nil:
				s.msgs <- message{Method: "<bad message: " + err.Error() + ">"}
				if m == nil {
					return
				}
				continue
			}
			_, _ = log.Write(m.Raw)
			s.msgs <- *m
		}
	}()
}

// comments returns how many SSE comments arrived so far.
func (s *stream) comments() int { return s.ms.Comments() }

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
	if !m.IsRequest() || m.Method != method {
		s.tb.Fatalf("want a %s request, got %s", method, m.Raw)
	}
	return m
}

// result returns the next message, checking it is the successful response
// to id (JSON text).
func (s *stream) result(id string) json.RawMessage {
	s.tb.Helper()
	m := s.next()
	if !m.IsResponse() || string(m.ID) != id {
		s.tb.Fatalf("want the response to %s, got %s", id, m.Raw)
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
	if !m.IsResponse() || string(m.ID) != id || m.Error == nil {
		s.tb.Fatalf("want an error response to %s, got %s", id, m.Raw)
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
			s.tb.Fatalf("%s: unexpected message %s", what, m.Raw)
		}
	case <-time.After(quiet):
	}
}

// close abandons the stream (closes the connection).
func (s *stream) close() { _ = s.ms.Close() }

// wireClient is a 2025-11-25 client on mcptest whose session id and
// version a test may set by hand.
type wireClient struct {
	tb      testing.TB
	url     string
	sid     string
	version string
	caps    *mcp.ClientCapabilities
	log     *wireLog
	clients map[string]*mcptest.Client // by url
}

// newClient returns a client without a session. It settles the server
// first, so that the session it opens gets only the changes made after.
func newClient(tb testing.TB, f *fixture) *wireClient {
	tb.Helper()
	settle(tb, f.srv)
	return &wireClient{tb: tb, url: f.ts.URL + "/mcp", log: &wireLog{}, clients: map[string]*mcptest.Client{}}
}

// mc returns the mcptest client for the current url.
func (c *wireClient) mc() *mcptest.Client {
	c.tb.Helper()
	if m := c.clients[c.url]; m != nil {
		return m
	}
	caps := c.caps
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	m, err := mcptest.New(mcptest.URL(c.url, nil), &mcptest.Options{
		Protocol:     mcp.LegacyProtocolVersion,
		ClientInfo:   mcp.Implementation{Name: "legacy-test-client", Version: "1.0.0"},
		Capabilities: caps,
	})
	if err != nil {
		c.tb.Fatalf("mcptest.New: %v", err)
	}
	c.clients[c.url] = m
	return m
}

// headers returns the options that put the client's session id and
// version on a request (or leave them out), then hdr's ("" removes).
func (c *wireClient) headers(hdr map[string]string) []mcptest.CallOption {
	var opts []mcptest.CallOption
	if c.sid != "" {
		opts = append(opts, mcptest.WithHeader(rpcwire.HeaderSessionID, c.sid))
	} else {
		opts = append(opts, mcptest.WithoutHeader(rpcwire.HeaderSessionID))
	}
	if c.version != "" {
		opts = append(opts, mcptest.WithHeader(rpcwire.HeaderProtocolVersion, c.version))
	} else {
		opts = append(opts, mcptest.WithoutHeader(rpcwire.HeaderProtocolVersion))
	}
	for k, v := range hdr {
		if v == "" {
			opts = append(opts, mcptest.WithoutHeader(k))
		} else {
			opts = append(opts, mcptest.WithHeader(k, v))
		}
	}
	return opts
}

// track wraps an mcptest stream; Cleanup closes it.
func (c *wireClient) track(ms *mcptest.Stream, err error, what string) *stream {
	c.tb.Helper()
	if err != nil {
		c.tb.Fatalf("%s: %v", what, err)
	}
	s := &stream{tb: c.tb, ms: ms, status: ms.Status, ctype: ms.Header.Get("Content-Type"), header: ms.Header}
	if mt, _, _ := strings.Cut(s.ctype, ";"); mt != "" {
		s.ctype = mt
	}
	c.tb.Cleanup(s.close)
	s.read(c.log)
	return s
}

// do sends one HTTP request with body exactly as given (nil for none) and
// the session headers (if any): for DELETE, GET and other methods, and
// for tests where the bytes are the point.
func (c *wireClient) do(method string, body []byte, hdr map[string]string) *stream {
	c.tb.Helper()
	ms, err := c.mc().Send(context.Background(), method, body, c.headers(hdr)...)
	return c.track(ms, err, method)
}

// request POSTs a JSON-RPC request; id is a string or an integer.
func (c *wireClient) request(id any, method string, params any) *stream {
	c.tb.Helper()
	opts := append(c.headers(nil), mcptest.WithID(id))
	ms, _, err := c.mc().Open(context.Background(), method, params, opts...)
	return c.track(ms, err, method)
}

// requestWith is request with headers set (or, for "", removed).
func (c *wireClient) requestWith(id any, method string, params any, hdr map[string]string) *stream {
	c.tb.Helper()
	opts := append(c.headers(hdr), mcptest.WithID(id))
	ms, _, err := c.mc().Open(context.Background(), method, params, opts...)
	return c.track(ms, err, method)
}

// answerWith POSTs the client's result for a server-to-client request
// with headers hdr and returns the HTTP status (202 when accepted).
func (c *wireClient) answerWith(req message, result any, hdr map[string]string) int {
	c.tb.Helper()
	err := c.mc().Respond(context.Background(), req.ID, result, c.headers(hdr)...)
	var e *mcptest.Error
	switch {
	case err == nil:
		return http.StatusAccepted
	case errors.As(err, &e):
		return e.Status
	}
	c.tb.Fatal(err)
	return 0
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

func (c *wireClient) notify(method string, params any) {
	c.tb.Helper()
	if err := c.mc().Notify(context.Background(), method, params, c.headers(nil)...); err != nil {
		c.tb.Fatal(err)
	}
}

// answer POSTs the client's result for a server-to-client request.
func (c *wireClient) answer(req message, result any) {
	c.tb.Helper()
	if err := c.mc().Respond(context.Background(), req.ID, result, c.headers(nil)...); err != nil {
		c.tb.Fatal(err)
	}
}

// answerError POSTs the client's error for a server-to-client request.
func (c *wireClient) answerError(req message, code int, msg string) {
	c.tb.Helper()
	if err := c.mc().Respond(context.Background(), req.ID, &mcp.Error{Code: code, Message: msg}, c.headers(nil)...); err != nil {
		c.tb.Fatal(err)
	}
}

// get opens the session's GET stream.
func (c *wireClient) get(accept string) *stream {
	c.tb.Helper()
	ms, err := c.mc().Send(context.Background(), http.MethodGet, nil, c.headers(map[string]string{"Accept": accept})...)
	return c.track(ms, err, "GET")
}

func initParams(version, caps string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    json.RawMessage(caps),
		"clientInfo":      map[string]any{"name": "legacy-test-client", "version": "1.0.0"},
	}
}

// connect performs the handshake through mcptest (initialize without
// MCP-Protocol-Version, then notifications/initialized) declaring caps,
// and returns the client bound to the new session.
func connect(tb testing.TB, f *fixture, caps string) *wireClient {
	tb.Helper()
	return connectWith(tb, f, caps, nil)
}

// connectWith is connect with headers on the handshake's requests (an
// authenticated subject, say).
func connectWith(tb testing.TB, f *fixture, caps string, hdr map[string]string) *wireClient {
	tb.Helper()
	c := newClient(tb, f)
	c.caps = &mcp.ClientCapabilities{}
	if err := json.Unmarshal([]byte(caps), c.caps); err != nil {
		tb.Fatalf("capabilities %s: %v", caps, err)
	}
	var opts []mcptest.CallOption
	for k, v := range hdr {
		opts = append(opts, mcptest.WithHeader(k, v))
	}
	init, err := c.mc().Connect(context.Background(), opts...)
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	c.sid, c.version = init.SessionID, init.ProtocolVersion
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

// modernPost sends a 2026-07-28 request (mcptest adds the _meta envelope
// and the MCP headers) to the fixture's endpoint and returns status and
// message.
func modernPost(tb testing.TB, f *fixture, id any, method string, p map[string]any, caps string) (int, message) {
	tb.Helper()
	var cc mcp.ClientCapabilities
	if err := json.Unmarshal([]byte(caps), &cc); err != nil {
		tb.Fatalf("capabilities %s: %v", caps, err)
	}
	mc, err := mcptest.New(mcptest.URL(f.ts.URL+"/mcp", nil), &mcptest.Options{Capabilities: &cc})
	if err != nil {
		tb.Fatalf("mcptest.New: %v", err)
	}
	ms, _, err := mc.Open(context.Background(), method, p, mcptest.WithID(id))
	if err != nil {
		tb.Fatalf("POST: %v", err)
	}
	defer ms.Close()
	if ms.Header.Get(rpcwire.HeaderSessionID) != "" {
		tb.Errorf("a modern response carries %s", rpcwire.HeaderSessionID)
	}
	m, err := ms.Next(context.Background())
	if err != nil {
		tb.Fatalf("%s: %v", method, err)
	}
	return ms.Status, *m
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
