package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

const testKey = "0123456789abcdef0123456789abcdef-test"

// exampleServer is the example server with key as its state key, its log
// discarded, closed when the test ends.
func exampleServer(t *testing.T, key string) *server.Server {
	t.Helper()
	keys, err := stateKeys(key)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := newServer(keys, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func newTestServer(t *testing.T, key string) *httptest.Server {
	t.Helper()
	ts := httptest.NewServer(exampleServer(t, key))
	t.Cleanup(ts.Close)
	return ts
}

type rpcResponse struct {
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call sends tools/call confirm_transfer with optional retry fields.
func call(t *testing.T, url string, extra map[string]any) rpcResponse {
	t.Helper()
	return callTool(t, url, "confirm_transfer", map[string]any{"to": "bob", "amount": 25.5}, extra)
}

// callTool sends one modern tools/call through mcptest, without driving
// rounds; extra may carry the retry's requestState and inputResponses.
func callTool(t *testing.T, url, name string, args any, extra map[string]any) rpcResponse {
	t.Helper()
	c, err := mcptest.New(mcptest.URL(url, nil), &mcptest.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var opts []mcptest.CallOption
	if extra != nil {
		state, _ := extra["requestState"].(string)
		opts = append(opts, mcptest.Resume(state, extra["inputResponses"]))
	}
	resp, err := c.Do(t.Context(), "tools/call", map[string]any{"name": name, "arguments": args}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	var out rpcResponse
	if resp.Error != nil {
		out.Error = &struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}{resp.Error.Code, resp.Error.Message}
		return out
	}
	if err := json.Unmarshal(resp.Result, &out.Result); err != nil {
		t.Fatalf("result %s: %v", resp.Result, err)
	}
	return out
}

func text(t *testing.T, r rpcResponse) (string, bool) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	var res struct {
		Content []struct{ Text string }
		IsError bool
	}
	raw, _ := json.Marshal(r.Result)
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("not a tool result: %s", raw)
	}
	return res.Content[0].Text, res.IsError
}

func TestConfirmTransfer(t *testing.T) {
	ts := newTestServer(t, testKey)
	r1 := call(t, ts.URL, nil)
	if r1.Error != nil || string(r1.Result["resultType"]) != `"input_required"` {
		t.Fatalf("round 1: %+v", r1)
	}
	var state string
	if err := json.Unmarshal(r1.Result["requestState"], &state); err != nil || state == "" {
		t.Fatalf("requestState: %s", r1.Result["requestState"])
	}
	if !strings.Contains(string(r1.Result["inputRequests"]), `"confirm":{"type":"boolean"`) {
		t.Fatalf("inputRequests: %s", r1.Result["inputRequests"])
	}
	for _, tc := range []struct {
		name, answer string
		want         string
		isError      bool
	}{
		{"accepted", `{"action":"accept","content":{"confirm":true}}`, "Transferred 25.5 to bob", false},
		{"accepted but false", `{"action":"accept","content":{"confirm":false}}`, "Transfer declined", true},
		{"declined", `{"action":"decline"}`, "Transfer declined", true},
		{"cancelled", `{"action":"cancel"}`, "Transfer declined", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r2 := call(t, ts.URL, map[string]any{"inputResponses": map[string]json.RawMessage{"confirm": json.RawMessage(tc.answer)}, "requestState": state})
			got, isErr := text(t, r2)
			if got != tc.want || isErr != tc.isError {
				t.Fatalf("got %q (isError %v), want %q (isError %v)", got, isErr, tc.want, tc.isError)
			}
		})
	}
}

func TestConfirmTransferRefusesForeignState(t *testing.T) {
	a := newTestServer(t, testKey)
	other := newTestServer(t, "another-key-another-key-another-key!")
	r1 := call(t, a.URL, nil)
	var state string
	_ = json.Unmarshal(r1.Result["requestState"], &state)
	r2 := call(t, other.URL, map[string]any{"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}, "requestState": state})
	if r2.Error == nil || r2.Error.Code != -32602 || !strings.Contains(r2.Error.Message, "requestState") {
		t.Fatalf("state from a server with another key: %+v", r2)
	}
}

// Two servers that share nothing but the key finish each other's flows.
func TestTwoInstancesShareFlows(t *testing.T) {
	a := newTestServer(t, testKey)
	b := newTestServer(t, testKey)
	r1 := call(t, a.URL, nil)
	var state string
	_ = json.Unmarshal(r1.Result["requestState"], &state)
	r2 := call(t, b.URL, map[string]any{"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}, "requestState": state})
	if got, isErr := text(t, r2); got != "Transferred 25.5 to bob" || isErr {
		t.Fatalf("round 2 on the other instance: %q", got)
	}
}

func TestStateKeyValidation(t *testing.T) {
	if _, err := stateKeys("short"); err == nil {
		t.Fatal("a short BATON_STATE_KEY must be refused")
	}
	if r, err := stateKeys(""); err != nil || r != nil {
		t.Fatalf("no key: %v, %v", r, err)
	}
	a, _ := stateKeys(testKey)
	b, _ := stateKeys(testKey)
	if a.SigningKeyID() != b.SigningKeyID() {
		t.Fatal("the key id must be derived from the key so instances agree")
	}
}

// The helpers below read the single requests keys_test.go and
// writeonce_test.go send with callTool (mcptest's Do): the rounds by hand,
// since which instance gets which retry, and with which state, is the
// point.

// inputRequired returns the keys asked and the state of an input_required
// result.
func inputRequired(t *testing.T, r rpcResponse) (keys []string, state string) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	if string(r.Result["resultType"]) != `"input_required"` {
		t.Fatalf("not input_required: %v", r.Result)
	}
	var reqs map[string]json.RawMessage
	if err := json.Unmarshal(r.Result["inputRequests"], &reqs); err != nil {
		t.Fatal(err)
	}
	for k := range reqs {
		keys = append(keys, k)
	}
	if err := json.Unmarshal(r.Result["requestState"], &state); err != nil || state == "" {
		t.Fatalf("requestState: %s", r.Result["requestState"])
	}
	return keys, state
}

func retry(state string, answers map[string]any) map[string]any {
	return map[string]any{"requestState": state, "inputResponses": answers}
}

func acceptContent(field, value string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{field: value}}
}

func toolText(t *testing.T, r rpcResponse) (string, bool) {
	t.Helper()
	if string(r.Result["resultType"]) != `"complete"` {
		t.Fatalf("not complete: %v %v", r.Result, r.Error)
	}
	return text(t, r)
}
