package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// This file drives the server as a client would, through mcptest: every
// request carries the 2026-07-28 envelope and headers, and the checks
// below read what came back. Tests change what mcptest sends with its
// call options (WithHeader, WithoutHeader, WithMeta, Resume, an explicit
// _meta in Do's params) and send hostile bodies with DoRaw.

// newClient returns an mcptest client that serves h in process and
// declares caps, client capabilities as JSON text ("" declares none).
func newClient(tb testing.TB, h http.Handler, caps string) *mcptest.Client {
	tb.Helper()
	return newClientOpts(tb, mcptest.Handler(h), &mcptest.Options{Capabilities: capsOf(tb, caps)})
}

// newClientOpts returns an mcptest client of target with opts.
func newClientOpts(tb testing.TB, target mcptest.Target, opts *mcptest.Options) *mcptest.Client {
	tb.Helper()
	c, err := mcptest.New(target, opts)
	if err != nil {
		tb.Fatalf("mcptest.New: %v", err)
	}
	return c
}

// capsOf decodes client capabilities from JSON text ("" is none).
func capsOf(tb testing.TB, js string) *mcp.ClientCapabilities {
	tb.Helper()
	caps := &mcp.ClientCapabilities{}
	if js == "" {
		return caps
	}
	if err := json.Unmarshal([]byte(js), caps); err != nil {
		tb.Fatalf("capabilities %s: %v", js, err)
	}
	return caps
}

// testContext bounds one test's requests by waitLimit, a guard against
// hangs.
func testContext(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	tb.Cleanup(cancel)
	return ctx
}

// send sends one request of method with params (its members besides
// _meta, which the client adds) without driving rounds. A transport
// failure or a response that breaks the protocol fails the test.
func send(tb testing.TB, c *mcptest.Client, method string, params any, opts ...mcptest.CallOption) *mcptest.Response {
	tb.Helper()
	r, err := c.Do(testContext(tb), method, params, opts...)
	if err != nil {
		tb.Fatalf("%s: %v", method, err)
	}
	return r
}

// sendTool sends one tools/call of name with arguments args (none when
// nil), without driving rounds.
func sendTool(tb testing.TB, c *mcptest.Client, name string, args any, opts ...mcptest.CallOption) *mcptest.Response {
	tb.Helper()
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	return send(tb, c, "tools/call", p, opts...)
}

// sendRaw posts body exactly as given, with the client's headers (see
// mcptest.Client.DoRaw): for bodies that are the point of the test.
func sendRaw(tb testing.TB, c *mcptest.Client, body string, opts ...mcptest.CallOption) *mcptest.Response {
	tb.Helper()
	r, err := c.DoRaw(testContext(tb), []byte(body), opts...)
	if err != nil {
		tb.Fatalf("DoRaw %.100s: %v", body, err)
	}
	return r
}

// wantError checks a plain-JSON error response: its HTTP status and code,
// no result beside it, and the request's id echoed (mcptest checks the id
// is the request's or null; here null is refused too). It returns the
// error.
func wantError(tb testing.TB, r *mcptest.Response, status, code int) *mcptest.Error {
	tb.Helper()
	e := wantErrorID(tb, r, status, code, "")
	if string(r.ID) == "null" {
		tb.Errorf("error response id is null; want the request's")
	}
	return e
}

// wantErrorID is wantError for an exact id (JSON text such as "null" or
// `"x"`; "" checks none).
func wantErrorID(tb testing.TB, r *mcptest.Response, status, code int, id string) *mcptest.Error {
	tb.Helper()
	if r.Status != status {
		tb.Errorf("HTTP status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	if r.Error == nil {
		tb.Fatalf("want error %d, got %s", code, r.Body)
	}
	if r.Error.Code != code {
		tb.Errorf("error code = %d, want %d (%s)", r.Error.Code, code, r.Error.Message)
	}
	if id != "" && string(r.ID) != id {
		tb.Errorf("id = %s, want %s", r.ID, id)
	}
	return r.Error
}

// wantResult checks a plain-JSON success response (HTTP 200; mcptest
// checked the echoed id) and returns its result decoded.
func wantResult(tb testing.TB, r *mcptest.Response) map[string]any {
	tb.Helper()
	if r.Status != http.StatusOK {
		tb.Fatalf("HTTP status = %d, want 200; body %s", r.Status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	if r.Error != nil {
		tb.Fatalf("want a result, got error %d: %s", r.Error.Code, r.Error.Message)
	}
	return decodeObject(tb, r.Result)
}

// completeResult checks resultType "complete" and serverInfo.
func completeResult(tb testing.TB, r *mcptest.Response) map[string]any {
	tb.Helper()
	res := wantResult(tb, r)
	if res["resultType"] != "complete" {
		tb.Errorf("resultType = %v, want complete: %v", res["resultType"], res)
	}
	checkServerInfo(tb, res)
	return res
}

// wantInputRequired checks an input_required result: serverInfo, no
// caching hints, a requestState, and the keys asked. It returns the
// requests and state.
func wantInputRequired(tb testing.TB, r *mcptest.Response, keys ...string) irr {
	tb.Helper()
	res := wantResult(tb, r)
	if res["resultType"] != "input_required" {
		tb.Fatalf("resultType = %v, want input_required: %v", res["resultType"], res)
	}
	checkServerInfo(tb, res)
	for _, k := range []string{"ttlMs", "cacheScope"} {
		if _, ok := res[k]; ok {
			tb.Errorf("input_required result carries %s", k)
		}
	}
	var out irr
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
	return out
}

// roundKeys returns the keys of the input requests of each input_required
// round of an exchange, in order.
func roundKeys(ex *mcptest.Exchange) [][]string {
	var out [][]string
	for _, r := range ex.Rounds[:len(ex.Rounds)-1] {
		var keys []string
		for _, ir := range r.InputRequests {
			keys = append(keys, ir.Key)
		}
		out = append(out, keys)
	}
	return out
}

// wantHTTPError checks the error response a handler wrote to rec for a
// request mcptest cannot send (a GET, a PUT): plain JSON, status, code,
// and a null id.
func wantHTTPError(tb testing.TB, rec *httptest.ResponseRecorder, status, code int) {
	tb.Helper()
	if rec.Code != status {
		tb.Errorf("HTTP status = %d, want %d; body %s", rec.Code, status, rec.Body.Bytes())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *mcptest.Error  `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil || r.JSONRPC != "2.0" || r.Error == nil {
		tb.Fatalf("want a JSON-RPC error %d, got %s (%v)", code, rec.Body.Bytes(), err)
	}
	if r.Error.Code != code || string(r.ID) != "null" {
		tb.Errorf("error %d with id %s, want %d with id null", r.Error.Code, r.ID, code)
	}
}

// bodyTap wraps a handler and keeps the body of every response it served,
// once its handler returned: mcptest stops reading a stream at the
// response, and some tests check that nothing followed it.
type bodyTap struct {
	h      http.Handler
	mu     sync.Mutex
	bodies []string
	served chan struct{}
}

func newBodyTap(h http.Handler) *bodyTap {
	return &bodyTap{h: h, served: make(chan struct{}, 1)}
}

func (b *bodyTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	tw := &tapWriter{ResponseWriter: w}
	b.h.ServeHTTP(tw, r)
	b.mu.Lock()
	b.bodies = append(b.bodies, tw.buf.String())
	b.mu.Unlock()
	select {
	case b.served <- struct{}{}:
	default:
	}
}

// body returns the body of the n-th response (from 1), waiting up to
// waitLimit for its handler to return.
func (b *bodyTap) body(tb testing.TB, n int) string {
	tb.Helper()
	deadline := time.After(waitLimit)
	for {
		b.mu.Lock()
		if len(b.bodies) >= n {
			s := b.bodies[n-1]
			b.mu.Unlock()
			return s
		}
		b.mu.Unlock()
		select {
		case <-b.served:
		case <-deadline:
			tb.Fatalf("response %d was not served within the wait limit", n)
		}
	}
}

// tapWriter copies what a handler writes; Unwrap lets
// http.ResponseController flush the writer underneath.
type tapWriter struct {
	http.ResponseWriter
	buf bytes.Buffer
}

func (w *tapWriter) Write(p []byte) (int, error) {
	w.buf.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *tapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wantStreamEnded checks that the n-th response the tap served was an
// event stream whose last message is the response (an id and a result or
// an error): nothing followed it.
func wantStreamEnded(tb testing.TB, tap *bodyTap, n int) {
	tb.Helper()
	body := tap.body(tb, n)
	var last string
	for line := range strings.SplitSeq(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			last = strings.TrimSpace(d)
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal([]byte(last), &m); err != nil || m.Method != "" || len(m.ID) == 0 || (m.Result == nil && m.Error == nil) {
		tb.Fatalf("the stream does not end with the response; its last message is %q (%v)", last, err)
	}
}

// wire is one HTTP request as mcptest sent it.
type wire struct {
	body   []byte
	header http.Header
}

// wireOf returns the request that send makes through a client of h
// declaring caps, captured on its way to h (which serves it once).
// Benchmarks replay it through ServeHTTP, so that each iteration measures
// the server and not the client.
func wireOf(tb testing.TB, h http.Handler, caps string, send func(c *mcptest.Client)) wire {
	tb.Helper()
	var got wire
	capture := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			tb.Errorf("reading the request: %v", err)
		}
		got = wire{body: body, header: r.Header.Clone()}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
	send(newClient(tb, capture, caps))
	if got.body == nil {
		tb.Fatal("the client sent no request")
	}
	return got
}

// serve replays w through h.ServeHTTP, with body instead of w's when not
// nil, and returns the recorded response.
func (w wire) serve(h http.Handler, body []byte) *httptest.ResponseRecorder {
	if body == nil {
		body = w.body
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	r.Header = w.header
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}
