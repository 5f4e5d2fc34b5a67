package lambda

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// coldInstances returns instances built from the shared key, one per
// request, as cold function instances would be.
func coldInstances(t *testing.T, k kind) func() http.Handler {
	return func() http.Handler { return newServer(t, k.domain) }
}

// wantJSON checks that every response the bridge served was plain JSON,
// not base64-encoded.
func wantJSON(t *testing.T, b *lambdaBridge) {
	t.Helper()
	for i, res := range b.served() {
		if ct := res.Headers["Content-Type"]; ct != "application/json" || res.Base64 {
			t.Errorf("response %d: Content-Type %q, base64 %v; want plain JSON", i+1, ct, res.Base64)
		}
	}
}

// TestMRTRFlowAcrossColdInstances drives the greet flow through every
// event kind, each round served by a new server and adapter built from the
// shared key, as cold function instances would.
func TestMRTRFlowAcrossColdInstances(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, tc := range []struct {
				name    string
				answer  func() (*elicit.Result, error)
				want    string
				isError bool
			}{
				{"accepted", func() (*elicit.Result, error) { return mcptest.Accept(map[string]any{"name": "Ada"}) }, "Hello, Ada!", false},
				{"declined", mcptest.Decline, "No name given", true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					b := newLambdaBridge(t, k, coldInstances(t, k))
					c := bridgeClient(t, b, func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
						if mcptest.InputKey(ctx) != "name" || req.Message != "What is your name?" {
							return nil, fmt.Errorf("asked %q under %q", req.Message, mcptest.InputKey(ctx))
						}
						return tc.answer()
					})
					res, err := c.CallTool(context.Background(), "greet", map[string]any{})
					if err != nil {
						t.Fatal(err)
					}
					if got := res.Text(); got != tc.want || res.IsError != tc.isError {
						t.Fatalf("round 2: %q (isError %v), want %q (isError %v)", got, res.IsError, tc.want, tc.isError)
					}
					r1 := res.Exchange.Rounds[0]
					if len(res.Exchange.Rounds) != 2 || r1.Status != http.StatusOK || strings.Count(r1.RequestState, ".") != 3 ||
						len(r1.InputRequests) != 1 || r1.InputRequests[0].Method != "elicitation/create" {
						t.Fatalf("round 1: %+v, want input_required asking a name, with a JWT state", r1)
					}
					wantJSON(t, b)
				})
			}
		})
	}
}

// TestTamperedStateRefused edits one character of the state's signature:
// the fresh instance refuses it with -32602 before the tool runs, as does
// an instance with another key given the untouched state.
func TestTamperedStateRefused(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := context.Background()
			b := newLambdaBridge(t, k, coldInstances(t, k))
			c := bridgeClient(t, b, nil)
			r1, err := c.Do(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}})
			if err != nil || r1.ResultType() != "input_required" {
				t.Fatalf("round 1: %v %s", err, r1.Body)
			}
			var round1 struct {
				RequestState string `json:"requestState"`
			}
			if err := json.Unmarshal(r1.Result, &round1); err != nil || strings.Count(round1.RequestState, ".") != 3 {
				t.Fatalf("round 1: requestState %q, want a JWT", round1.RequestState)
			}
			state := round1.RequestState
			sig := strings.LastIndexByte(state, '.') + 1
			flip := byte('A')
			if state[sig] == 'A' {
				flip = 'B'
			}
			tampered := state[:sig] + string(flip) + state[sig+1:]
			retry := func(c *mcptest.Client, state, name string) *mcptest.Response {
				t.Helper()
				r, err := c.Do(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}},
					mcptest.Resume(state, map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": name}}}))
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			r := retry(c, tampered, "Mallory")
			if r.Status != rpcwire.HTTPStatus(mcp.InvalidParams) || r.Error == nil || r.Error.Code != mcp.InvalidParams {
				t.Fatalf("tampered state: %d %s, want -32602", r.Status, r.Body)
			}
			if strings.Contains(string(r.Body), "Mallory") {
				t.Errorf("the tool ran on a tampered state: %s", r.Body)
			}
			t.Logf("refused: %s", r.Error.Message)

			// An instance deployed with another key cannot finish the flow.
			other := newLambdaBridge(t, k, func() http.Handler {
				srv, err := buildServerWithKey("another-deployment-key-0123456789abcdef", []string{k.domain})
				if err != nil {
					t.Fatal(err)
				}
				return srv
			})
			r = retry(bridgeClient(t, other, nil), state, "Ada")
			if r.Status != http.StatusBadRequest || r.Error == nil || r.Error.Code != mcp.InvalidParams {
				t.Fatalf("another key: %d %s, want -32602", r.Status, r.Body)
			}
			wantJSON(t, b)
			wantJSON(t, other)
		})
	}
}

// TestAllowedHosts shows why a function must set AllowedHosts: with no
// loopback listener Baton's DNS-rebinding check has nothing to go on, so
// without AllowedHosts any Host passes; with them a foreign Host gets 403.
func TestAllowedHosts(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			foreign := func(f *fields) { *f.Domain = "attacker.example"; f.Headers["host"] = "attacker.example" }

			res := k.serve(t, context.Background(), newServer(t, k.domain), k.round1, foreign)
			e := wantRPCError(t, res, http.StatusForbidden, mcp.InvalidRequest)
			if !strings.Contains(e.Message, "attacker.example") {
				t.Errorf("message %q does not name the Host", e.Message)
			}

			res = k.serve(t, context.Background(), newServer(t), k.round1, foreign)
			if res.Status != http.StatusOK {
				t.Fatalf("without AllowedHosts: status %d, want 200 (any Host passes): %s", res.Status, res.Body)
			}

			// The domain name, not the host header, is the Host.
			res = k.serve(t, context.Background(), newServer(t, k.domain), k.round1, func(f *fields) { f.Headers["host"] = "attacker.example" })
			if res.Status != http.StatusOK {
				t.Fatalf("recorded domain with another host header: status %d: %s", res.Status, res.Body)
			}
		})
	}
}

// TestNotificationsBuffered: progress notifications stream as SSE on a
// server; in the buffered modes they arrive in the same body as the final
// response (and in the streaming mode the whole stream reads the same; see
// TestStreamNotificationsLive for when they arrive).
func TestNotificationsBuffered(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			srv := newServer(t, k.domain)
			err := srv.AddTool(server.Tool{Name: "count"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
				for i := 1; i <= 3; i++ {
					if err := req.Progress(ctx, float64(i), 3, ""); err != nil {
						return nil, err
					}
				}
				return server.TextResult("counted"), nil
			})
			if err != nil {
				t.Fatal(err)
			}
			b := newLambdaBridge(t, k, func() http.Handler { return srv })
			r, err := bridgeClient(t, b, nil).Do(context.Background(), "tools/call", map[string]any{"name": "count"}, mcptest.WithProgressToken("p1"))
			if err != nil {
				t.Fatal(err)
			}
			res := b.served()[0]
			if res.Status != http.StatusOK || res.Headers["Content-Type"] != "text/event-stream" || res.Base64 {
				t.Fatalf("status %d, Content-Type %q, base64 %v: %s", res.Status, res.Headers["Content-Type"], res.Base64, res.Body)
			}
			if n := len(r.Notifications); n != 3 || !r.Streamed {
				t.Errorf("%d progress events, want 3:\n%s", n, res.Body)
			}
			for _, n := range r.Notifications {
				if n.Method != "notifications/progress" {
					t.Errorf("event %s %s, want progress", n.Method, n.Params)
				}
			}
			if last := strings.LastIndex(res.Body, "event: message"); !strings.Contains(res.Body[last:], `"counted"`) || !strings.Contains(string(r.Result), `"counted"`) {
				t.Errorf("the final response is not the last event:\n%s", res.Body)
			}
		})
	}
}
