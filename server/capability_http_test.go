package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/jsonrpc"
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
	sample := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("Capital of France?")}, MaxTokens: 10}
	var requiresRan atomic.Int32
	done := TextResult("done")

	mustAddTool(t, s, Tool{Name: "requires"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		requiresRan.Add(1)
		return done, nil
	}, RequireCapabilities(client.Capabilities{Sampling: &client.SamplingCapability{}}))
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
		if err := req.Log(ctx, LevelError, "t", "no logLevel: not sent"); err != nil {
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
	mustAddTool(t, s, Tool{Name: "progress_then_ask_requires"}, progressThenAsk, RequireCapabilities(client.Capabilities{Elicitation: &client.ElicitationCapability{}}))
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

	ts := httptest.NewServer(s)
	defer ts.Close()

	const (
		needElicitation = `{"requiredCapabilities":{"elicitation":{}}}`
		needURL         = `{"requiredCapabilities":{"elicitation":{"url":{}}}}`
		needSampling    = `{"requiredCapabilities":{"sampling":{}}}`
		needRoots       = `{"requiredCapabilities":{"roots":{}}}`
	)
	for _, tc := range []struct {
		name string
		req  *rpc
		data string
	}{
		{"RequireCapabilities", toolCall(1, "requires", nil), needSampling},
		{"Round.Elicit", toolCall(2, "round_elicit", nil), needElicitation},
		{"Round.Sample", toolCall(3, "round_sample", nil).caps(`{"elicitation":{}}`), needSampling},
		{"Round.ListRoots, wrapped", toolCall(4, "round_roots", nil), needRoots},
		{"blocking form elicitation", toolCall(5, "blocking_elicit", nil), needElicitation},
		{"blocking sampling", toolCall(6, "blocking_sample", nil), needSampling},
		{"URL elicitation required, form declared", toolCall(7, "url_required", nil).caps(`{"elicitation":{"form":{}}}`), needURL},
		{"URL elicitation required, nothing declared", toolCall(8, "url_required", nil), needURL},
		{"notifications not asked for", toolCall(9, "quiet_then_ask", nil), needElicitation},
		{"progress dropped: no event-stream accepted", toolCall(10, "progress_then_ask", nil).withMeta("progressToken", "tok").withAccept("application/json"), needElicitation},
		{"Requires before streaming progress", toolCall(11, "progress_then_ask_requires", nil).withMeta("progressToken", "tok"), needElicitation},
		{"prompts/get", call(12, "prompts/get", map[string]any{"name": "prompt_asks"}), needElicitation},
		{"resources/read", call(13, "resources/read", map[string]any{"uri": "test://asks"}), needRoots},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, context.Background(), ts.URL, tc.req)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("HTTP %d, want 400; body %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q, want application/json; body %s", ct, body)
			}
			r := parseResponse(t, body)
			if r.Error == nil || r.Error.Code != jsonrpc.MissingRequiredClientCapability {
				t.Fatalf("body %s, want error -32021", body)
			}
			if want, _ := json.Marshal(tc.req.id); string(r.ID) != string(want) {
				t.Errorf("id %s, want %s", r.ID, want)
			}
			if string(r.Error.Data) != tc.data {
				t.Errorf("data %s, want %s", r.Error.Data, tc.data)
			}
		})
	}
	if n := requiresRan.Load(); n != 0 {
		t.Errorf("the handler of a tool whose Requires is missing ran %d times", n)
	}

	// Streamed first: 200, the progress event, then the error as the last
	// event.
	t.Run("progress streamed before the question", func(t *testing.T) {
		resp := post(t, context.Background(), ts.URL, toolCall(20, "progress_then_ask", nil).withMeta("progressToken", "tok"))
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("HTTP %d %s, want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		events := readEvents(resp.Body)
		if ev := nextEvent(t, events); ev.Method != "notifications/progress" {
			t.Fatalf("first event %+v, want the progress", ev)
		}
		ev := nextEvent(t, events)
		if string(ev.ID) != "20" || ev.Error == nil || ev.Error.Code != jsonrpc.MissingRequiredClientCapability || string(ev.Error.Data) != needElicitation {
			t.Fatalf("last event %+v, want error -32021 %s", ev, needElicitation)
		}
		wantStreamEnd(t, events)
	})
	if t.Failed() {
		return
	}
	// And with the capability declared each path works (the tests above
	// fail for the right reason).
	resp := post(t, context.Background(), ts.URL, toolCall(30, "requires", nil).caps(`{"sampling":{}}`))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("requires with sampling declared: HTTP %d", resp.StatusCode)
	}
	if n := requiresRan.Load(); n != 1 {
		t.Errorf("requires ran %d times, want 1", n)
	}
}
