package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
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
	c := newClientOpts(t, mcptest.Handler(s), &mcptest.Options{
		Capabilities: capsOf(t, formCaps),
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"ok": req.Message == "first?"})
		},
	})
	res, err := c.CallTool(testContext(t), "two", nil)
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Text(); text != `{"ok":true} {"ok":false}` {
		t.Fatalf("result %q", text)
	}
	// One question a round, under the reserved automatic keys.
	if keys := fmt.Sprint(roundKeys(res.Exchange)); keys != "[[baton:0] [baton:1]]" {
		t.Fatalf("rounds asked %s, want baton:0 then baton:1", keys)
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
	c := newClient(t, s, formCaps)
	r1 := wantInputRequired(t, sendTool(t, c, "both", nil), "baton:0", "baton:1")
	// Only one answered: the other is asked again, the first kept.
	r2 := wantInputRequired(t, sendTool(t, c, "both", nil, mcptest.Resume(r1.RequestState, map[string]any{"baton:1": map[string]any{"action": "decline"}})), "baton:0")
	res := completeResult(t, sendTool(t, c, "both", nil, mcptest.Resume(r2.RequestState, map[string]any{"baton:0": accept(true)})))
	if text, _ := toolText(t, res); text != "accept,decline" {
		t.Fatalf("result %q", text)
	}
}

func TestBlockingCallsNeedCapabilities(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "sample"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		_, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("hi")}, MaxTokens: 5})
		return nil, err
	})
	e := wantError(t, sendTool(t, newClient(t, s, formCaps), "sample", nil), 400, mcp.MissingRequiredClientCapability)
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
	send(t, newClient(t, s, formCaps), "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "p"}, "argument": map[string]any{"name": "a", "value": ""}})
	if !errors.Is(got, ErrNoPeer) {
		t.Fatalf("completion handlers cannot ask: %v", got)
	}
	mustAddTool(t, s, Tool{Name: "notify"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		return nil, req.NotifyElicitationComplete(ctx, "el-1")
	})
	res := completeResult(t, sendTool(t, newClient(t, s, ""), "notify", nil))
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
	c := newClient(t, s, formCaps)
	e := wantError(t, sendTool(t, c, "big", nil), 200, mcp.InternalError)
	if !strings.Contains(e.Message, "4096-byte limit") {
		t.Fatalf("message %q", e.Message)
	}
	// A presented token over the cap is refused before it is parsed.
	e = wantError(t, sendTool(t, c, "big", nil, mcptest.Resume(strings.Repeat("a", 5000), map[string]any{})), 400, mcp.InvalidParams)
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
	c := newClient(t, s, `{"elicitation":{"url":{}}}`)
	r := wantInputRequired(t, sendTool(t, c, "signin", nil), "signin-abc")
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
	wantInputRequired(t, sendTool(t, c, "signin", nil, mcptest.Resume(r.RequestState, map[string]any{"signin-abc": map[string]any{"action": "accept"}})), "signin-abc")
	// Without the url capability: -32021.
	wantError(t, sendTool(t, newClient(t, s, formCaps), "signin", nil), 400, mcp.MissingRequiredClientCapability)
}
