package server

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mrtr"
)

const formCaps = `{"elicitation":{}}`

// A blocking-style handler on the stateless protocol: each call replays.
func TestBlockingCallsReplay(t *testing.T) {
	s := newTestServer(t, nil)
	runs := 0
	mustAddTool(t, s, Tool{Name: "two"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		runs++
		a, err := req.Elicit(ctx, confirmForm(t, "first?"))
		if err != nil {
			return nil, err
		}
		b, err := req.Elicit(ctx, confirmForm(t, "second?"))
		if err != nil {
			return nil, err
		}
		return TextResult(string(a.Content) + " " + string(b.Content)), nil
	})
	r1 := wantInputRequired(t, do(t, s, toolCall(1, "two", nil).caps(formCaps)), "1", "baton:0")
	r2 := wantInputRequired(t, do(t, s, toolCall(2, "two", nil).caps(formCaps).retry(r1.RequestState, map[string]any{"baton:0": accept(true)})), "2", "baton:1")
	res := completeResult(t, do(t, s, toolCall(3, "two", nil).caps(formCaps).retry(r2.RequestState, map[string]any{"baton:1": accept(false)})), "3")
	if text, _ := toolText(t, res); text != `{"ok":true} {"ok":false}` {
		t.Fatalf("result %q", text)
	}
	if runs != 3 {
		t.Fatalf("handler ran %d times, want 3", runs)
	}
}

// AskAll asks several questions in one round.
func TestBlockingAskAll(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "both"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		res, err := req.AskAll(ctx, []mrtr.InputRequest{mrtr.ElicitRequest(confirmForm(t, "a?")), mrtr.ElicitRequest(confirmForm(t, "b?"))})
		if err != nil {
			return nil, err
		}
		return TextResult(string(res[0].Elicit.Action) + "," + string(res[1].Elicit.Action)), nil
	})
	r1 := wantInputRequired(t, do(t, s, toolCall(1, "both", nil).caps(formCaps)), "1", "baton:0", "baton:1")
	// Only one answered: the other is asked again, the first kept.
	r2 := wantInputRequired(t, do(t, s, toolCall(2, "both", nil).caps(formCaps).retry(r1.RequestState, map[string]any{"baton:1": map[string]any{"action": "decline"}})), "2", "baton:0")
	res := completeResult(t, do(t, s, toolCall(3, "both", nil).caps(formCaps).retry(r2.RequestState, map[string]any{"baton:0": accept(true)})), "3")
	if text, _ := toolText(t, res); text != "accept,decline" {
		t.Fatalf("result %q", text)
	}
}

func TestBlockingCallsNeedCapabilities(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "sample"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		_, err := req.CreateMessage(ctx, &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("hi")}, MaxTokens: 5})
		return nil, err
	})
	e := wantError(t, do(t, s, toolCall(1, "sample", nil).caps(formCaps)), 400, jsonrpc.MissingRequiredClientCapability, "1")
	if !strings.Contains(e.Message, "sampling") {
		t.Fatalf("message %q", e.Message)
	}
}

func TestBlockingCallsWithoutRound(t *testing.T) {
	s := newTestServer(t, nil)
	var got error
	s.SetCompletion(func(ctx context.Context, req *CompletionRequest) (*Completion, error) {
		_, got = req.Elicit(ctx, confirmForm(t, "x"))
		return &Completion{}, nil
	})
	textTool(s, t, "t", "x")
	do(t, s, call(1, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": ""}}).caps(formCaps))
	if !errors.Is(got, ErrNoPeer) {
		t.Fatalf("completion handlers cannot ask: %v", got)
	}
	mustAddTool(t, s, Tool{Name: "notify"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		return nil, req.NotifyElicitationComplete(ctx, "el-1")
	})
	res := completeResult(t, do(t, s, toolCall(2, "notify", nil)), "2")
	if text, isErr := toolText(t, res); !isErr || !strings.Contains(text, "2025-11-25") {
		t.Fatalf("NotifyElicitationComplete on a modern request: %q", text)
	}
}

// A state over the size cap is a clear error, not an unbounded token.
func TestOversizedState(t *testing.T) {
	s := newTestServer(t, &Options{MaxStateSize: 4096})
	mustAddTool(t, s, Tool{Name: "big"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.SaveState(strings.Repeat("x", 8000)); err != nil {
			return nil, err
		}
		_, err := req.Elicit(ctx, confirmForm(t, "ok?"), WithKey("ok"))
		return nil, err
	})
	e := wantError(t, do(t, s, toolCall(1, "big", nil).caps(formCaps)), 200, jsonrpc.InternalError, "1")
	if !strings.Contains(e.Message, "4096-byte limit") {
		t.Fatalf("message %q", e.Message)
	}
	// A presented token over the cap is refused before it is parsed.
	e = wantError(t, do(t, s, toolCall(2, "big", nil).caps(formCaps).retry(strings.Repeat("a", 5000), map[string]any{})), 400, jsonrpc.InvalidParams, "2")
	if !strings.Contains(e.Message, "over the 4096-byte limit") {
		t.Fatalf("message %q", e.Message)
	}
}

// URLElicitationRequiredError becomes input_required for modern clients:
// URL requests keyed by their elicitationId, which is not sent.
func TestURLElicitationRequiredModern(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "signin"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		u, err := elicit.NewURL("Sign in to continue", "https://auth.example.com/start?flow=abc")
		if err != nil {
			return nil, err
		}
		u.ElicitationID = "signin-abc"
		return nil, &URLElicitationRequiredError{Elicitations: []*elicit.Request{u}}
	})
	urlCaps := `{"elicitation":{"url":{}}}`
	r := wantInputRequired(t, do(t, s, toolCall(1, "signin", nil).caps(urlCaps)), "1", "signin-abc")
	var ir struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if err := json.Unmarshal(r.InputRequests["signin-abc"], &ir); err != nil {
		t.Fatal(err)
	}
	if ir.Params["mode"] != "url" || ir.Params["url"] == nil {
		t.Fatalf("request %s", r.InputRequests["signin-abc"])
	}
	if _, ok := ir.Params["elicitationId"]; ok {
		t.Fatalf("a modern URL elicitation carries elicitationId: %s", r.InputRequests["signin-abc"])
	}
	// Accepting (consent only) and retrying while the flow is incomplete
	// asks again.
	wantInputRequired(t, do(t, s, toolCall(2, "signin", nil).caps(urlCaps).retry(r.RequestState, map[string]any{"signin-abc": map[string]any{"action": "accept"}})), "2", "signin-abc")
	// Without the url capability: -32021.
	wantError(t, do(t, s, toolCall(3, "signin", nil).caps(formCaps)), 400, jsonrpc.MissingRequiredClientCapability, "3")
}
