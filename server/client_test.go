package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/baton-mcp/baton/client"
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
func capsOf(tb testing.TB, js string) *client.Capabilities {
	tb.Helper()
	caps := &client.Capabilities{}
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
