package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// Case variants of a member name must never fill a field (the message
// smuggling class of CVE-2026-27896).
func TestCaseVariantsAreNotSmuggled(t *testing.T) {
	s := newTestServer(t, nil)
	var got int
	mustAddTool(t, s, Tool{Name: "pay", InputSchema: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer","maximum":100}}}`)},
		func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			var in struct {
				Amount int `json:"amount"`
			}
			if err := req.Bind(&in); err != nil {
				return nil, err
			}
			got = in.Amount
			return TextResult("paid"), nil
		})
	textTool(s, t, "a", "tool a")
	textTool(s, t, "b", "tool b")
	c := newClient(t, s, "")

	// A case variant never fills the field; Bind refuses it by name
	// rather than drop it silently, so the call is an isError result.
	for _, args := range []string{`{"amount":10,"AMOUNT":100000}`, `{"Amount":100000}`} {
		got = -1
		res := completeResult(t, sendTool(t, c, "pay", json.RawMessage(args)))
		text, isErr := toolText(t, res)
		if got != -1 {
			t.Fatalf("%s: handler went on with amount %d", args, got)
		}
		if !isErr || !strings.Contains(text, "matches field Amount") || !strings.Contains(text, "case") {
			t.Fatalf("%s: result %q (isError %v), want an error naming the key and the field", args, text, isErr)
		}
	}
	completeResult(t, sendTool(t, c, "pay", json.RawMessage(`{"amount":10}`)))
	if got != 10 {
		t.Fatalf("handler saw amount %d, want 10", got)
	}

	// "NAME" does not rename the call: tool a runs, and Mcp-Name must say a.
	r := send(t, c, "tools/call", map[string]any{"name": "a", "NAME": "b"})
	if text, _ := toolText(t, completeResult(t, r)); text != "tool a" {
		t.Fatalf("ran %q", text)
	}
	// An upper-case _META is not the envelope (a body mcptest would
	// complete with a _meta of its own).
	r = sendRaw(t, c, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_META":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	wantErrorID(t, r, 400, mcp.InvalidParams, "4")
}

func TestHandlerPanicIsAnError(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "boom"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		var m map[string]int
		m["x"] = 1 // nil map write
		return nil, nil
	})
	c := newClient(t, s, "")
	e := wantError(t, sendTool(t, c, "boom", nil), 200, mcp.InternalError)
	if !strings.Contains(e.Message, "tool boom") {
		t.Fatalf("message = %q", e.Message)
	}
	// The server keeps serving.
	textTool(s, t, "ok", "fine")
	completeResult(t, sendTool(t, c, "ok", nil))
}

func TestParamNumbersAreJSONNumbers(t *testing.T) {
	for _, tc := range []struct {
		body, header string
		ok           bool
	}{
		{"3", "3", true},
		{"3", "3.0", true},
		{"3", "3e0", true},
		{"3", "6/2", false},
		{"3", "0x3", false},
		{"3", "+3", false},
		{"3", "03", false},
		{`"3"`, "3", false},
		{"-1.5", "-1.50", true},
		{"12345678901234567890123.5", "12345678901234567741440", false},
		{"0.1", "0.10000000000000000001", false},
		{"1e999999", "10e999998", true},
		{"1", "1e999999999", false},
		{"-0", "0", true},
	} {
		if got := paramMatches("integer", json.RawMessage(tc.body), tc.header); got != tc.ok {
			t.Errorf("body %s, header %q: match = %v, want %v", tc.body, tc.header, got, tc.ok)
		}
	}
}

func TestAcceptsAnyObject(t *testing.T) {
	for schema, want := range map[string]bool{
		`{"type":"object"}`: true,
		`{"type":"object","properties":{},"description":"x"}`:                        true,
		`{"type":"object","properties":{"a":{"type":"string"}}}`:                     false,
		`{"type":"object","required":["a"]}`:                                         false,
		`{"type":"object","additionalProperties":false}`:                             false,
		`{"type":"object","minProperties":1}`:                                        false,
		`{"type":"array"}`:                                                           false,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`: true,
	} {
		if got := acceptsAnyObject(json.RawMessage(schema)); got != want {
			t.Errorf("acceptsAnyObject(%s) = %v, want %v", schema, got, want)
		}
	}
}

// A suspended call remembers that its arguments passed the input schema;
// arguments that failed are never remembered, and the memo is bounded.
func TestValidMemo(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`)},
		func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			if _, err := req.Elicit(ctx, confirmForm(t, "ok?"), WithKey("ok")); err != nil {
				return nil, err
			}
			return TextResult("done"), nil
		})
	e, _ := s.tools.get("ask")
	c := newClient(t, s, formCaps)
	r1 := wantInputRequired(t, sendTool(t, c, "ask", map[string]any{"id": 7}), "ok")
	d, err := seal.ArgumentsDigest(json.RawMessage(`{"id":7}`))
	if err != nil {
		t.Fatal(err)
	}
	if !e.valid.has(d) {
		t.Fatal("the suspended call's arguments were not remembered")
	}
	res := completeResult(t, sendTool(t, c, "ask", map[string]any{"id": 7}, mcptest.Resume(r1.RequestState, map[string]any{"ok": accept(true)})))
	if text, _ := toolText(t, res); text != "done" {
		t.Fatalf("retry: %q", text)
	}
	completeResult(t, sendTool(t, c, "ask", map[string]any{"id": "x"}))
	bad, _ := seal.ArgumentsDigest(json.RawMessage(`{"id":"x"}`))
	if e.valid.has(bad) {
		t.Fatal("invalid arguments were remembered")
	}
	// Numbers that a float64 cannot tell apart are different arguments:
	// the memo of the first must not let the second skip validation.
	big := json.RawMessage(`{"id":12345678901234567741440}`)
	r2 := wantInputRequired(t, sendTool(t, c, "ask", big), "ok")
	fraction := json.RawMessage(`{"id":12345678901234567890123.5}`)
	e4 := wantError(t, sendTool(t, c, "ask", fraction, mcptest.Resume(r2.RequestState, map[string]any{"ok": accept(true)})), http.StatusBadRequest, -32602)
	if !strings.Contains(e4.Message, "not issued for this request") {
		t.Fatalf("a state for %s accepted for %s: %s", big, fraction, e4.Message)
	}
	var m validMemo
	for i := 0; i < validMemoSize+10; i++ {
		m.add(seal.Digest{byte(i), byte(i >> 8)})
	}
	if len(m.seen) != validMemoSize {
		t.Fatalf("memo holds %d, want at most %d", len(m.seen), validMemoSize)
	}
}
