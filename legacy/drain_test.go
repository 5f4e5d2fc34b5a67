package legacy_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
)

// During Server.Shutdown, a call waiting for the client's answer parks at
// once (issue 32): its stream ends without a response and the drain ends
// without waiting for the person. The draining instance answers a
// resumption with a stream that ends at once, with the client's own id
// and a retry field; the client resumes on another instance, and its
// answer, POSTed there, runs the call there, whose response ends the
// resumed stream. Every response during the drain says Connection: close.
//
// It runs on the usual HTTP/1.1 server, where the call runs on its
// request's goroutine and the drain completes the response from outside,
// and behind a ResponseWriter that does not reach its connection (as
// on HTTP/2), where the call runs on a goroutine of its own.
func TestDrainDetachesParkedCall(t *testing.T) {
	t.Run("http1", func(t *testing.T) { testDrainDetachesParkedCall(t, nil) })
	t.Run("writer without its connection", func(t *testing.T) { testDrainDetachesParkedCall(t, hideConnection) })
}

// hideConnection serves h through a ResponseWriter that only writes and
// flushes: net/http's connection cannot be taken through it.
func hideConnection(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(flushOnly{w}, r)
	})
}

type flushOnly struct{ w http.ResponseWriter }

func (f flushOnly) Header() http.Header         { return f.w.Header() }
func (f flushOnly) Write(b []byte) (int, error) { return f.w.Write(b) }
func (f flushOnly) WriteHeader(code int)        { f.w.WriteHeader(code) }
func (f flushOnly) Flush()                      { f.w.(http.Flusher).Flush() }

// helloNameTool registers "ask_name": one form elicitation, answered
// with "hello " and the name.
func helloNameTool(t *testing.T) func(srv *server.Server) {
	return func(srv *server.Server) {
		addTool(t, srv, "ask_name", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				return nil, err
			}
			var v struct {
				Name string `json:"name"`
			}
			_ = r.Decode(&v)
			return server.TextResult("hello " + v.Name), nil
		})
	}
}

func testDrainDetachesParkedCall(t *testing.T, wrap func(http.Handler) http.Handler) {
	ti := newTwoInstancesWith(t, legacy.NewMemoryStore(nil), legacy.Options{Events: legacy.NewMemoryEventStore(0)}, wrap, helloNameTool(t))
	c := connect(t, ti.a, `{"elicitation":{}}`)
	call := readSSE(c.rawRequest(http.MethodPost, instanceURL(ti.a), mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": toolCall("ask_name", nil)}), nil))
	ask := call.next(t)
	if ask.msg.Method != "elicitation/create" || ask.id == "" {
		t.Fatalf("first event %q %s, want the elicitation with an id", ask.id, ask.msg.Raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- ti.srvA.Shutdown(ctx) }()

	// The parked call's stream ends, with no response.
	select {
	case e, open := <-call.ch:
		if open {
			t.Fatalf("the parked call's stream went on with %s, want its end", e.msg.Raw)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the drain did not end the parked call's stream")
	}
	// The draining instance sends the resumption elsewhere: a stream that
	// ends at once, with the client's id and a retry field.
	refused := c.rawRequest(http.MethodGet, instanceURL(ti.a), nil, map[string]string{"Last-Event-ID": ask.id, "Accept": "text/event-stream"})
	body, _ := io.ReadAll(refused.Body)
	if refused.StatusCode != http.StatusOK || !refused.Close || !strings.Contains(string(body), "id: "+ask.id+"\n") || !strings.Contains(string(body), "retry: ") {
		t.Errorf("resume on the draining instance: HTTP %d, Connection: close %v, body %q; want 200, true, the id and a retry field", refused.StatusCode, refused.Close, body)
	}
	select {
	case err := <-drained: // with only a waiting call, the drain does not wait
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown waited for a call that waits for its user")
	}
	resumed := readSSE(c.rawRequest(http.MethodGet, instanceURL(ti.b), nil, map[string]string{"Last-Event-ID": ask.id, "Accept": "text/event-stream"}))
	if resumed.resp.StatusCode != http.StatusOK {
		t.Fatalf("resume on the other instance: HTTP %d", resumed.resp.StatusCode)
	}
	c.on(ti.b).answer(ask.msg, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
	res := resumed.next(t)
	if text, _ := toolText(t, res.msg.Result); text != "hello Ada" || string(res.msg.ID) != "7" {
		t.Errorf("the resumed stream's response %s, want hello Ada for request 7", res.msg.Raw)
	}
}
