package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
)

// askTool registers "ask": one form elicitation, answered with its action
// and name.
func askTool(t *testing.T) func(srv *server.Server) {
	return func(srv *server.Server) {
		addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				return nil, err
			}
			var v struct {
				Name string `json:"name"`
			}
			_ = r.Decode(&v)
			return server.TextResult(string(r.Action) + " " + v.Name), nil
		})
	}
}

// postAnswer POSTs an answer with id and returns the status and the
// error's message, if any.
func (c *wireClient) postAnswer(id json.RawMessage, result any) (int, string) {
	c.tb.Helper()
	s := c.do(http.MethodPost, mustJSON(c.tb, map[string]any{"jsonrpc": "2.0", "id": id, "result": result}), nil)
	var msg string
	for _, m := range s.end() {
		if m.Error != nil {
			msg = m.Error.Message
		}
	}
	return s.status, msg
}

// The answers to a call's requests are accepted only from its session,
// for a request that waits, and within the size limit; each refusal says
// why, and the call still gets the real answer.
func TestAnswersAreChecked(t *testing.T) {
	sharedStores(t, func(t *testing.T, newStore func(t *testing.T) legacy.Store) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{MaxAnswerBytes: 4096}, askTool(t))
		c := connect(t, ti.a, `{"elicitation":{}}`)
		other := connect(t, ti.a, `{"elicitation":{}}`)
		call := c.on(ti.a).request("c1", "tools/call", toolCall("ask", nil))
		req := call.nextRequest("elicitation/create")
		var id string
		if err := json.Unmarshal(req.ID, &id); err != nil {
			t.Fatalf("server request id %s: %v", req.ID, err)
		}
		inst, _, _ := strings.Cut(id, ".")
		accept := map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}
		for _, tc := range []struct {
			name   string
			c      *wireClient
			id     string
			result any
			status int
			says   string
		}{
			{"forged id naming the instance", c.on(ti.b), inst + ".999999999", accept, http.StatusBadRequest, "no request of this session waits"},
			{"forged id naming no instance", c.on(ti.b), "abc", accept, http.StatusBadRequest, "no request of this session waits"},
			{"the real id from another session", other.on(ti.b), id, accept, http.StatusBadRequest, "no request of this session waits"},
			{"the real id from another session, on the holder", other.on(ti.a), id, accept, http.StatusBadRequest, "no request of this session waits"},
			{"too large", c.on(ti.b), id, map[string]any{"action": "accept", "content": map[string]any{"name": strings.Repeat("x", 5000)}}, http.StatusRequestEntityTooLarge, "at most 4096"},
		} {
			status, says := tc.c.postAnswer(json.RawMessage(fmt.Sprintf("%q", tc.id)), tc.result)
			if status != tc.status || !strings.Contains(says, tc.says) {
				t.Errorf("%s: HTTP %d %q, want %d saying %q", tc.name, status, says, tc.status, tc.says)
			}
		}
		c.on(ti.b).answer(req, accept)
		if text, _ := toolText(t, call.result(`"c1"`)); text != "accept Ada" {
			t.Errorf("result = %q, want the real answer", text)
		}
		// Answered: the same answer again is refused.
		if status, _ := c.on(ti.b).postAnswer(req.ID, accept); status != http.StatusBadRequest {
			t.Errorf("the answer again: HTTP %d, want 400", status)
		}
	})
}

// silentStore drops every message between instances: an answer still
// reaches its call, from the store, on the holder's next poll.
type silentStore struct{ legacy.Store }

func (silentStore) Publish(context.Context, string, []byte) error { return nil }

func TestAnswerWithoutWakeup(t *testing.T) {
	sharedStores(t, func(t *testing.T, newStore func(t *testing.T) legacy.Store) {
		ti := newTwoInstances(t, silentStore{newStore(t)}, legacy.Options{}, askTool(t))
		c := connect(t, ti.a, `{"elicitation":{}}`)
		call := c.on(ti.a).request("c1", "tools/call", toolCall("ask", nil))
		c.on(ti.b).answer(call.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		if text, _ := toolText(t, call.result(`"c1"`)); text != "accept Ada" {
			t.Errorf("result = %q", text)
		}
	})
}

// A session that floods answers is refused with 429 once it spent its
// burst; another session's answer is accepted meanwhile.
func TestAnswerRate(t *testing.T) {
	srv := newLegacyServer(t, &legacy.Options{MaxAnswersPerSecond: 2}, nil)
	askTool(t)(srv)
	f := newFixture(t, srv)
	flood, calm := connect(t, f, `{"elicitation":{}}`), connect(t, f, `{"elicitation":{}}`)
	refused := 0
	for i := range 30 {
		s := flood.do(http.MethodPost, mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "result": map[string]any{}}), nil)
		if s.status == http.StatusTooManyRequests {
			refused++
			if s.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		}
		s.end()
	}
	if refused == 0 {
		t.Error("30 answers from one session at once, none refused with 429 (MaxAnswersPerSecond 2)")
	}
	call := calm.request(1, "tools/call", toolCall("ask", nil))
	calm.answer(call.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}})
	if text, _ := toolText(t, call.result("1")); text != "accept Bo" {
		t.Errorf("result = %q", text)
	}
	t.Logf("%d of 30 answers of the flooding session refused with 429", refused)
}
