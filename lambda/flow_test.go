package lambda

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/server"
)

// round1 serves the recorded round-1 event on a fresh instance and
// returns the requestState of its input_required result, with the
// recorded JSON-RPC body it sent.
func round1(t *testing.T, k kind) (state string, body []byte) {
	t.Helper()
	res := k.serve(t, context.Background(), newServer(t, k.domain), k.round1, func(f *fields) { body = f.body(t) })
	if res.Status != http.StatusOK {
		t.Fatalf("round 1: status %d: %s", res.Status, res.Body)
	}
	out := parse(t, res)
	if out.Error != nil {
		t.Fatalf("round 1: error %d: %s", out.Error.Code, out.Error.Message)
	}
	if string(out.ID) != "1" {
		t.Errorf("round 1: id = %s, want 1", out.ID)
	}
	if got := string(out.Result["resultType"]); got != `"input_required"` {
		t.Fatalf("round 1: resultType = %s, want input_required: %s", got, res.Body)
	}
	var requests map[string]struct {
		Method string `json:"method"`
	}
	if err := json.Unmarshal(out.Result["inputRequests"], &requests); err != nil || requests["name"].Method != "elicitation/create" {
		t.Fatalf("round 1: inputRequests = %s", out.Result["inputRequests"])
	}
	if err := json.Unmarshal(out.Result["requestState"], &state); err != nil || strings.Count(state, ".") != 2 {
		t.Fatalf("round 1: requestState = %s, want a JWT", out.Result["requestState"])
	}
	return state, body
}

// round2 serves the retry, built from the recorded round-1 event, on a
// fresh instance whose AllowedHosts are hosts.
func round2(t *testing.T, k kind, body []byte, hosts []string, edit func(*fields)) result {
	t.Helper()
	return k.serve(t, context.Background(), newServer(t, hosts...), k.round1, func(f *fields) {
		f.setBody(body)
		if edit != nil {
			edit(f)
		}
	})
}

// TestMRTRFlowAcrossColdInstances drives the greet flow through both event
// kinds, every round served by a new server and adapter built from the
// shared key, as cold function instances would.
func TestMRTRFlowAcrossColdInstances(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			state, body := round1(t, k)
			for _, tc := range []struct {
				name, answer, want string
				isError            bool
			}{
				{"accepted", `{"name":{"action":"accept","content":{"name":"Ada"}}}`, "Hello, Ada!", false},
				{"declined", `{"name":{"action":"decline"}}`, "No name given", true},
			} {
				t.Run(tc.name, func(t *testing.T) {
					res := round2(t, k, retryBody(t, body, state, tc.answer), []string{k.domain}, nil)
					if res.Status != http.StatusOK {
						t.Fatalf("round 2: status %d: %s", res.Status, res.Body)
					}
					out := parse(t, res)
					if string(out.ID) != "2" {
						t.Errorf("round 2: id = %s, want 2", out.ID)
					}
					if got := string(out.Result["resultType"]); got != `"complete"` {
						t.Errorf("round 2: resultType = %s, want complete", got)
					}
					got, isErr := toolText(t, out)
					if got != tc.want || isErr != tc.isError {
						t.Fatalf("round 2: %q (isError %v), want %q (isError %v)", got, isErr, tc.want, tc.isError)
					}
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
			state, body := round1(t, k)
			sig := strings.LastIndexByte(state, '.') + 1
			flip := byte('A')
			if state[sig] == 'A' {
				flip = 'B'
			}
			tampered := state[:sig] + string(flip) + state[sig+1:]
			res := round2(t, k, retryBody(t, body, tampered, `{"name":{"action":"accept","content":{"name":"Mallory"}}}`), []string{k.domain}, nil)
			e := wantRPCError(t, res, jsonrpc.HTTPStatus(jsonrpc.InvalidParams), jsonrpc.InvalidParams)
			if strings.Contains(res.Body, "Mallory") {
				t.Errorf("the tool ran on a tampered state: %s", res.Body)
			}
			t.Logf("refused: %s", e.Message)

			// An instance deployed with another key cannot finish the flow.
			other, err := buildServerWithKey("another-deployment-key-0123456789abcdef", []string{k.domain})
			if err != nil {
				t.Fatal(err)
			}
			res = k.serve(t, context.Background(), other, k.round1, func(f *fields) {
				f.setBody(retryBody(t, body, state, `{"name":{"action":"accept","content":{"name":"Ada"}}}`))
			})
			wantRPCError(t, res, http.StatusBadRequest, jsonrpc.InvalidParams)
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
			e := wantRPCError(t, res, http.StatusForbidden, jsonrpc.InvalidRequest)
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
			body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"count","_meta":{"progressToken":"p1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			res := k.serve(t, context.Background(), srv, k.round1, func(f *fields) {
				f.setBody([]byte(body))
				f.Headers["mcp-name"] = "count"
			})
			if res.Status != http.StatusOK || res.Headers["Content-Type"] != "text/event-stream" || res.Base64 {
				t.Fatalf("status %d, Content-Type %q, base64 %v: %s", res.Status, res.Headers["Content-Type"], res.Base64, res.Body)
			}
			if n := strings.Count(res.Body, `"method":"notifications/progress"`); n != 3 {
				t.Errorf("%d progress events, want 3:\n%s", n, res.Body)
			}
			if last := strings.LastIndex(res.Body, "event: message"); !strings.Contains(res.Body[last:], `"counted"`) {
				t.Errorf("the final response is not the last event:\n%s", res.Body)
			}
		})
	}
}
