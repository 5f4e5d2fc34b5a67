package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// TestMissingCapabilityIsHTTP400 sends, over real HTTP, a request for every
// path that ends in -32021 before anything was streamed: the response must
// be HTTP 400 with a JSON body (not a 200 event stream), whatever the
// client's Accept header allows. Once a notification has been streamed
// the status is already 200 and the error can only be the last event; the
// last cases show that, and that RequireCapabilities avoids it.
func TestMissingCapabilityIsHTTP400(t *testing.T) {
	s := newTestServer(t, nil)
	form, err := elicit.NewForm("Your name?", elicit.String("name").Required())
	if err != nil {
		t.Fatal(err)
	}
	signIn, err := elicit.NewURL("Sign in", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	signIn.ElicitationID = "login-1"
	sample := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("Capital of France?")}, MaxTokens: 10}
	var requiresRan atomic.Int32
	done := TextResult("done")

	mustAddTool(t, s, Tool{Name: "requires"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		requiresRan.Add(1)
		return done, nil
	}, RequireCapabilities(mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}))
	mustAddTool(t, s, Tool{Name: "round_elicit"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.Elicit(ctx, form, WithKey("name")); err != nil {
			return nil, err
		}
		return done, nil
	})
	mustAddTool(t, s, Tool{Name: "round_sample"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.CreateMessage(ctx, sample, WithKey("capital")); err != nil {
			return nil, err
		}
		return done, nil
	})
	mustAddTool(t, s, Tool{Name: "round_roots"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.ListRoots(ctx, WithKey("roots")); err != nil {
			return nil, fmt.Errorf("listing roots: %w", err) // wrapped: still -32021
		}
		return done, nil
	})
	mustAddTool(t, s, Tool{Name: "blocking_elicit"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.CreateFormElicitation(ctx, "Your name?", form.RequestedSchema); err != nil {
			return nil, err
		}
		return done, nil
	})
	mustAddTool(t, s, Tool{Name: "blocking_sample"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.CreateMessage(ctx, sample); err != nil {
			return nil, err
		}
		return done, nil
	})
	mustAddTool(t, s, Tool{Name: "url_required"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		return nil, &URLElicitationRequiredError{Message: "Sign in first", Elicitations: []*elicit.Request{signIn}}
	})
	// Notifications the request did not ask for are never sent, so they do
	// not open the stream.
	mustAddTool(t, s, Tool{Name: "quiet_then_ask"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, "no token: not sent"); err != nil {
			return nil, err
		}
		if err := req.Log(ctx, slog.LevelError, "t", "no logLevel: not sent"); err != nil {
			return nil, err
		}
		if _, err := req.Elicit(ctx, form, WithKey("name")); err != nil {
			return nil, err
		}
		return done, nil
	})
	progressThenAsk := func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, "preparing the question"); err != nil {
			return nil, err
		}
		if _, err := req.Elicit(ctx, form, WithKey("name")); err != nil {
			return nil, err
		}
		return done, nil
	}
	mustAddTool(t, s, Tool{Name: "progress_then_ask"}, progressThenAsk)
	mustAddTool(t, s, Tool{Name: "progress_then_ask_requires"}, progressThenAsk, RequireCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}))
	if err := s.AddPrompt(Prompt{Name: "prompt_asks"}, func(ctx context.Context, req *PromptRequest) (*PromptResult, error) {
		if _, err := req.Elicit(ctx, form, WithKey("name")); err != nil {
			return nil, err
		}
		return &PromptResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{URI: "test://asks", Name: "asks"}, func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		if _, err := req.ListRoots(ctx, WithKey("roots")); err != nil {
			return nil, err
		}
		return &ResourceResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}

	needsSampling := RequireCapabilities(mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}})
	if err := s.AddPrompt(Prompt{Name: "prompt_requires"}, func(ctx context.Context, req *PromptRequest) (*PromptResult, error) {
		requiresRan.Add(1)
		return UserPrompt("done"), nil
	}, needsSampling); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "test://requires/{x}", Name: "requires"}, func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		requiresRan.Add(1)
		return TextResource(req.URI, "", "done"), nil
	}, needsSampling); err != nil {
		t.Fatal(err)
	}

	tap := newBodyTap(s)
	ts := httptest.NewServer(tap)
	defer ts.Close()
	served := 0
	// over returns a client of the live server declaring caps.
	over := func(caps string) *mcptest.Client {
		return newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{Capabilities: capsOf(t, caps)})
	}
	tool := func(name, caps string, opts ...mcptest.CallOption) func() *mcptest.Response {
		return func() *mcptest.Response { return sendTool(t, over(caps), name, nil, opts...) }
	}

	const (
		needElicitation = `{"requiredCapabilities":{"elicitation":{}}}`
		needURL         = `{"requiredCapabilities":{"elicitation":{"url":{}}}}`
		needSampling    = `{"requiredCapabilities":{"sampling":{}}}`
		needRoots       = `{"requiredCapabilities":{"roots":{}}}`
	)
	for _, tc := range []struct {
		name string
		send func() *mcptest.Response
		data string
	}{
		{"RequireCapabilities", tool("requires", ""), needSampling},
		{"keyed Elicit", tool("round_elicit", ""), needElicitation},
		{"keyed CreateMessage", tool("round_sample", `{"elicitation":{}}`), needSampling},
		{"keyed ListRoots, wrapped", tool("round_roots", ""), needRoots},
		{"blocking form elicitation", tool("blocking_elicit", ""), needElicitation},
		{"blocking sampling", tool("blocking_sample", ""), needSampling},
		{"URL elicitation required, form declared", tool("url_required", `{"elicitation":{"form":{}}}`), needURL},
		{"URL elicitation required, nothing declared", tool("url_required", ""), needURL},
		{"notifications not asked for", tool("quiet_then_ask", ""), needElicitation},
		{"progress dropped: no event-stream accepted", tool("progress_then_ask", "", mcptest.WithProgressToken("tok"), mcptest.WithHeader("Accept", "application/json")), needElicitation},
		{"Requires before streaming progress", tool("progress_then_ask_requires", "", mcptest.WithProgressToken("tok")), needElicitation},
		{"prompts/get", func() *mcptest.Response {
			return send(t, over(""), "prompts/get", map[string]any{"name": "prompt_asks"})
		}, needElicitation},
		{"resources/read", func() *mcptest.Response {
			return send(t, over(""), "resources/read", map[string]any{"uri": "test://asks"})
		}, needRoots},
		{"RequireCapabilities on a prompt", func() *mcptest.Response {
			return send(t, over(`{"elicitation":{}}`), "prompts/get", map[string]any{"name": "prompt_requires"})
		}, needSampling},
		{"RequireCapabilities on a resource template", func() *mcptest.Response {
			return send(t, over(""), "resources/read", map[string]any{"uri": "test://requires/1"})
		}, needSampling},
	} {
		t.Run(tc.name, func(t *testing.T) {
			served++
			e := wantError(t, tc.send(), http.StatusBadRequest, mcp.MissingRequiredClientCapability)
			if string(e.Data) != tc.data {
				t.Errorf("data %s, want %s", e.Data, tc.data)
			}
		})
	}
	if n := requiresRan.Load(); n != 0 {
		t.Errorf("the handler of a tool whose Requires is missing ran %d times", n)
	}

	// Streamed first: 200, the progress event, then the error as the last
	// event.
	t.Run("progress streamed before the question", func(t *testing.T) {
		r := tool("progress_then_ask", "", mcptest.WithProgressToken("tok"))()
		served++
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("HTTP %d %s, want 200 text/event-stream", r.Status, r.Header.Get("Content-Type"))
		}
		if len(r.Notifications) != 1 || r.Notifications[0].Method != "notifications/progress" {
			t.Fatalf("events %+v, want the progress", r.Notifications)
		}
		if string(r.ID) == "null" || r.Error == nil || r.Error.Code != mcp.MissingRequiredClientCapability || string(r.Error.Data) != needElicitation {
			t.Fatalf("last event %s, want error -32021 %s", r.Body, needElicitation)
		}
		wantStreamEnded(t, tap, served)
	})
	if t.Failed() {
		return
	}
	// And with the capability declared each path works (the tests above
	// fail for the right reason).
	if r := tool("requires", `{"sampling":{}}`)(); r.Status != http.StatusOK {
		t.Errorf("requires with sampling declared: HTTP %d", r.Status)
	}
	if n := requiresRan.Load(); n != 1 {
		t.Errorf("requires ran %d times, want 1", n)
	}
}
