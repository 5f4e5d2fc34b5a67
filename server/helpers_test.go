package server

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
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
)

// testVersion is the protocol version every test request declares.
const testVersion = ProtocolVersion

// waitLimit bounds every wait for something the test expects to happen. It
// is a guard against hangs, never a pause: waits end as soon as the event
// arrives.
const waitLimit = 10 * time.Second

// testKey is the fixed requestState key of every test server.
var testKey = mrtr.Key{ID: "k1", Secret: []byte("baton-test-secret-0123456789abcdef")}

func testRing(tb testing.TB) *mrtr.KeyRing {
	tb.Helper()
	ring, err := mrtr.NewKeyRing(testKey)
	if err != nil {
		tb.Fatalf("NewKeyRing: %v", err)
	}
	return ring
}

var testInfo = Implementation{Name: "baton-test", Version: "1.2.3"}

// newTestServer builds a server with the fixed key ring and a discard
// logger; opts may set anything else.
func newTestServer(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.StateKeys == nil {
		o.StateKeys = testRing(tb)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := New(testInfo, &o)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s
}

// mustAddTool registers a tool or fails the test.
func mustAddTool(tb testing.TB, s *Server, t Tool, h ToolHandler, opts ...RegisterOption) {
	tb.Helper()
	if err := s.AddTool(t, h, opts...); err != nil {
		tb.Fatalf("AddTool(%s): %v", t.Name, err)
	}
}

// textTool returns a tool with no declared arguments that answers text.
func textTool(s *Server, tb testing.TB, name, text string) {
	tb.Helper()
	mustAddTool(tb, s, Tool{Name: name}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return TextResult(text), nil
	})
}

// confirmForm is a form with one required boolean field "ok".
func confirmForm(tb testing.TB, message string) *elicit.Request {
	tb.Helper()
	f, err := elicit.NewForm(message, elicit.Boolean("ok").Required())
	if err != nil {
		tb.Fatalf("NewForm: %v", err)
	}
	return f
}

// rpc is a request under construction. Its body carries the required _meta
// envelope unless removed; its HTTP form carries the MCP headers matching
// the body unless overridden.
type rpc struct {
	id      any // int, string, or nil for a notification
	method  string
	params  map[string]any
	meta    map[string]any
	noMeta  bool
	raw     []byte // when set, the exact body
	headers http.Header
	drop    []string // headers to leave out
	accept  string
}

// call starts a request with id and method; params are its params besides
// _meta. The envelope declares testVersion and no client capabilities.
func call(id any, method string, params map[string]any) *rpc {
	if params == nil {
		params = map[string]any{}
	}
	return &rpc{
		id: id, method: method, params: params,
		meta: map[string]any{
			metaProtocolVersion: testVersion,
			metaClientCaps:      map[string]any{},
		},
		headers: http.Header{},
		accept:  "application/json, text/event-stream",
	}
}

// toolCall starts a tools/call of name with arguments args (omitted if nil).
func toolCall(id any, name string, args any) *rpc {
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	return call(id, "tools/call", p)
}

// caps sets the declared client capabilities from JSON text.
func (c *rpc) caps(js string) *rpc {
	c.meta[metaClientCaps] = json.RawMessage(js)
	return c
}

// withMeta sets (or, with a nil value, removes) a _meta key.
func (c *rpc) withMeta(k string, v any) *rpc {
	if v == nil {
		delete(c.meta, k)
	} else {
		c.meta[k] = v
	}
	return c
}

// withoutMeta leaves _meta out of the params.
func (c *rpc) withoutMeta() *rpc { c.noMeta = true; return c }

// withParam sets a params member.
func (c *rpc) withParam(k string, v any) *rpc { c.params[k] = v; return c }

// retry adds the MRTR retry members.
func (c *rpc) retry(state string, responses any) *rpc {
	if state != "" {
		c.params["requestState"] = state
	}
	if responses != nil {
		c.params["inputResponses"] = responses
	}
	return c
}

// header sets a header, replacing the one the builder would send.
func (c *rpc) header(k, v string) *rpc { c.headers.Set(k, v); return c }

// without leaves a header out.
func (c *rpc) without(k string) *rpc { c.drop = append(c.drop, k); return c }

// body sets the exact request body.
func (c *rpc) body(b string) *rpc { c.raw = []byte(b); return c }

// withAccept sets the Accept header.
func (c *rpc) withAccept(a string) *rpc { c.accept = a; return c }

// encode returns the JSON-RPC body.
func (c *rpc) encode(tb testing.TB) []byte {
	tb.Helper()
	if c.raw != nil {
		return c.raw
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": c.method}
	if c.id != nil {
		msg["id"] = c.id
	}
	params := make(map[string]any, len(c.params)+1)
	for k, v := range c.params {
		params[k] = v
	}
	if !c.noMeta {
		params["_meta"] = c.meta
	}
	msg["params"] = params
	b, err := json.Marshal(msg)
	if err != nil {
		tb.Fatalf("encode request: %v", err)
	}
	return b
}

// nameHeader returns the Mcp-Name value the request needs, if any.
func (c *rpc) nameHeader() (string, bool) {
	var key string
	switch c.method {
	case "tools/call", "prompts/get":
		key = "name"
	case "resources/read":
		key = "uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		key = "taskId"
	default:
		return "", false
	}
	s, ok := c.params[key].(string)
	return s, ok
}

// applyHeaders sets the MCP headers on h.
func (c *rpc) applyHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	if c.accept != "" {
		h.Set("Accept", c.accept)
	}
	if v, ok := c.meta[metaProtocolVersion].(string); ok {
		h.Set(HeaderProtocolVersion, v)
	}
	h.Set(HeaderMethod, c.method)
	if n, ok := c.nameHeader(); ok {
		h.Set(HeaderName, n)
	}
	for k, vs := range c.headers {
		h[k] = vs
	}
	for _, k := range c.drop {
		h.Del(k)
	}
}

// httpRequest returns the request for ServeHTTP (target example.com).
func (c *rpc) httpRequest(tb testing.TB) *http.Request {
	tb.Helper()
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(c.encode(tb)))
	c.applyHeaders(r.Header)
	return r
}

// do serves the request in process and returns the recorded response.
func do(tb testing.TB, h http.Handler, c *rpc) *httptest.ResponseRecorder {
	tb.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, c.httpRequest(tb))
	return rec
}

// post sends the request to a live server at url.
func post(tb testing.TB, ctx context.Context, url string, c *rpc) *http.Response {
	tb.Helper()
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(c.encode(tb)))
	if err != nil {
		tb.Fatalf("NewRequest: %v", err)
	}
	c.applyHeaders(r.Header)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		tb.Fatalf("POST: %v", err)
	}
	return resp
}

// wireError is a JSON-RPC error object as received.
type wireError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

// response is a JSON-RPC response or notification as received.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

func parseResponse(tb testing.TB, b []byte) response {
	tb.Helper()
	var r response
	if err := json.Unmarshal(b, &r); err != nil {
		tb.Fatalf("response is not JSON: %v\n%s", err, b)
	}
	if r.JSONRPC != "2.0" {
		tb.Fatalf("response jsonrpc = %q, want 2.0: %s", r.JSONRPC, b)
	}
	return r
}

// wantError checks a recorded plain-JSON error response: HTTP status, code,
// and the echoed id (JSON text, "null" for none). It returns the error.
func wantErrorRec(tb testing.TB, rec *httptest.ResponseRecorder, status, code int, id string) *wireError {
	tb.Helper()
	if rec.Code != status {
		tb.Errorf("HTTP status = %d, want %d; body %s", rec.Code, status, rec.Body.Bytes())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	r := parseResponse(tb, rec.Body.Bytes())
	if r.Error == nil {
		tb.Fatalf("want error %d, got %s", code, rec.Body.Bytes())
	}
	if r.Error.Code != code {
		tb.Errorf("error code = %d, want %d (%s)", r.Error.Code, code, r.Error.Message)
	}
	if string(r.ID) != id {
		tb.Errorf("id = %s, want %s", r.ID, id)
	}
	if r.Result != nil {
		tb.Errorf("error response also has a result: %s", r.Result)
	}
	return r.Error
}

// wantResult checks a recorded plain-JSON success response (HTTP 200, the
// echoed id) and returns its result decoded.
func wantResultRec(tb testing.TB, rec *httptest.ResponseRecorder, id string) map[string]any {
	tb.Helper()
	if rec.Code != http.StatusOK {
		tb.Fatalf("HTTP status = %d, want 200; body %s", rec.Code, rec.Body.Bytes())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	r := parseResponse(tb, rec.Body.Bytes())
	if r.Error != nil {
		tb.Fatalf("want a result, got error %d: %s", r.Error.Code, r.Error.Message)
	}
	if string(r.ID) != id {
		tb.Errorf("id = %s, want %s", r.ID, id)
	}
	return decodeObject(tb, r.Result)
}

func decodeObject(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// checkServerInfo asserts the result _meta carries this server's identity.
func checkServerInfo(tb testing.TB, res map[string]any) {
	tb.Helper()
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta[metaServerInfo].(map[string]any)
	if info["name"] != testInfo.Name || info["version"] != testInfo.Version {
		tb.Errorf("_meta serverInfo = %v, want %s %s", meta[metaServerInfo], testInfo.Name, testInfo.Version)
	}
}

// completeResult checks resultType "complete" and serverInfo.
func completeResultRec(tb testing.TB, rec *httptest.ResponseRecorder, id string) map[string]any {
	tb.Helper()
	res := wantResultRec(tb, rec, id)
	if res["resultType"] != "complete" {
		tb.Errorf("resultType = %v, want complete: %v", res["resultType"], res)
	}
	checkServerInfo(tb, res)
	return res
}

// toolText returns the concatenated text of a tool result and its isError.
func toolText(tb testing.TB, res map[string]any) (string, bool) {
	tb.Helper()
	blocks, ok := res["content"].([]any)
	if !ok {
		tb.Fatalf("tool result without content array: %v", res)
	}
	var sb strings.Builder
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if m["type"] == "text" {
			s, _ := m["text"].(string)
			sb.WriteString(s)
		}
	}
	isErr, _ := res["isError"].(bool)
	return sb.String(), isErr
}

// irr is an input_required result.
type irr struct {
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
}

// wantInputRequired checks an input_required result: serverInfo, no caching
// hints, and the keys asked. It returns the requests and state.
func wantInputRequiredRec(tb testing.TB, rec *httptest.ResponseRecorder, id string, keys ...string) irr {
	tb.Helper()
	res := wantResultRec(tb, rec, id)
	if res["resultType"] != "input_required" {
		tb.Fatalf("resultType = %v, want input_required: %v", res["resultType"], res)
	}
	checkServerInfo(tb, res)
	for _, k := range []string{"ttlMs", "cacheScope"} {
		if _, ok := res[k]; ok {
			tb.Errorf("input_required result carries %s", k)
		}
	}
	var out struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	}
	r := parseResponse(tb, rec.Body.Bytes())
	if err := json.Unmarshal(r.Result, &out); err != nil {
		tb.Fatalf("decode input_required: %v", err)
	}
	if out.RequestState == "" {
		tb.Errorf("input_required without requestState: %s", r.Result)
	}
	if len(out.InputRequests) != len(keys) {
		tb.Errorf("inputRequests has %d entries, want %v: %s", len(out.InputRequests), keys, r.Result)
	}
	for _, k := range keys {
		if _, ok := out.InputRequests[k]; !ok {
			tb.Errorf("inputRequests lacks %q: %s", k, r.Result)
		}
	}
	return irr{InputRequests: out.InputRequests, RequestState: out.RequestState}
}

// accept is the ElicitResult accepting the confirm form.
func accept(ok bool) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{"ok": ok}}
}

// event is one SSE event.
type event struct {
	name string
	data []byte
}

// readEvents reads SSE events from r into the returned channel until r
// ends; comments are skipped. The channel closes at the end of the stream.
func readEvents(r io.Reader) <-chan event {
	ch := make(chan event, 16)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		var ev event
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if ev.data != nil {
					ch <- ev
				}
				ev = event{}
			case strings.HasPrefix(line, ":"):
			case strings.HasPrefix(line, "event:"):
				ev.name = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				d := strings.TrimPrefix(line[len("data:"):], " ")
				if ev.data != nil {
					ev.data = append(ev.data, '\n')
				}
				ev.data = append(ev.data, d...)
			}
		}
	}()
	return ch
}

// nextEvent returns the next SSE event as a message, failing the test when
// the stream ends or nothing arrives within waitLimit.
func nextEvent(tb testing.TB, ch <-chan event) response {
	tb.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			tb.Fatal("SSE stream ended; want another event")
		}
		if ev.name != "" && ev.name != "message" {
			tb.Errorf("SSE event name = %q, want message", ev.name)
		}
		return parseResponse(tb, ev.data)
	case <-time.After(waitLimit):
		tb.Fatal("no SSE event within the wait limit")
	}
	return response{}
}

// wantStreamEnd asserts the SSE stream ends without further events.
func wantStreamEnd(tb testing.TB, ch <-chan event) {
	tb.Helper()
	select {
	case ev, ok := <-ch:
		if ok {
			tb.Fatalf("unexpected SSE event after the response: %s", ev.data)
		}
	case <-time.After(waitLimit):
		tb.Fatal("SSE stream did not end")
	}
}

// receive waits for a value on ch, bounded by waitLimit.
func receive[T any](tb testing.TB, ch <-chan T, what string) T {
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
