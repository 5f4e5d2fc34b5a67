package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// twoInstances is two servers, each with its own legacy adapter, sharing
// one session Store: what a fleet looks like to one client.
type twoInstances struct {
	a, b       *fixture
	srvA, srvB *server.Server
}

// instanceURL returns the endpoint of f.
func instanceURL(f *fixture) string { return f.ts.URL + "/mcp" }

// sharedStores runs test once per store two instances can share: one
// memoryStore (instances in one process), and Redis (skipped, saying how
// to get it, when redis-server is missing).
func sharedStores(t *testing.T, test func(t *testing.T, newStore func(t *testing.T) legacy.Store)) {
	t.Run("memory", func(t *testing.T) {
		test(t, func(t *testing.T) legacy.Store { return legacy.NewMemoryStore(nil) })
	})
	t.Run("redis", func(t *testing.T) {
		rs := testredis.Start(t)
		test(t, func(t *testing.T) legacy.Store {
			return redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions()
		})
	})
}

// newTwoInstances starts two instances on store, each with the tools that
// register adds.
func newTwoInstances(t testing.TB, store legacy.Store, opts legacy.Options, register func(srv *server.Server)) *twoInstances {
	t.Helper()
	return newTwoInstancesWith(t, store, opts, nil, register)
}

// newTwoInstancesWith is newTwoInstances with each server's handler
// wrapped (nil: not).
func newTwoInstancesWith(t testing.TB, store legacy.Store, opts legacy.Options, wrap func(http.Handler) http.Handler, register func(srv *server.Server)) *twoInstances {
	t.Helper()
	opts.Store = store
	var ti twoInstances
	for _, p := range []struct {
		srv **server.Server
		f   **fixture
	}{{&ti.srvA, &ti.a}, {&ti.srvB, &ti.b}} {
		o := opts
		srv := newLegacyServer(t, &o, nil)
		register(srv)
		*p.srv, *p.f = srv, newFixtureWith(t, srv, wrap)
	}
	return &ti
}

// on points c at instance f for its next requests.
func (c *wireClient) on(f *fixture) *wireClient {
	c.url = instanceURL(f)
	return c
}

// TestSessionsAcrossInstances runs a 2025-11-25 client against two
// instances sharing a session store, moving every request between them as
// a round-robin balancer would.
func TestSessionsAcrossInstances(t *testing.T) {
	sharedStores(t, testSessionsAcrossInstances)
}

func testSessionsAcrossInstances(t *testing.T, newStore func(t *testing.T) legacy.Store) {
	handlerErr := make(chan error, 16)
	released := make(chan struct{})
	register := func(srv *server.Server) {
		addTool(t, srv, "echo", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			return server.TextResult("echo " + req.Meta.ProtocolVersion), nil
		})
		addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				handlerErr <- err
				return nil, err
			}
			var v struct {
				Name string `json:"name"`
			}
			_ = r.Decode(&v)
			return server.TextResult(string(r.Action) + " " + v.Name), nil
		})
		addTool(t, srv, "wait", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			// A line first, so that the call's stream opens.
			if err := req.Log(ctx, slog.LevelInfo, "test", "waiting"); err != nil {
				return nil, err
			}
			<-ctx.Done()
			handlerErr <- context.Cause(ctx)
			return nil, ctx.Err()
		})
		addTool(t, srv, "debug_log", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			if err := req.Log(ctx, slog.LevelDebug, "test", "a debug line"); err != nil {
				return nil, err
			}
			return server.TextResult("logged"), nil
		})
		addTool(t, srv, "complete_later", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			go func() {
				<-released
				handlerErr <- req.NotifyElicitationComplete(context.Background(), "el-later")
			}()
			return server.TextResult("started"), nil
		})
		textResource(t, srv, "test://a", "A")
		addTool(t, srv, "ask_two", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				return nil, err
			}
			var n struct {
				Name string `json:"name"`
			}
			if err := r.Decode(&n); err != nil {
				return nil, err
			}
			r, err = req.Elicit(ctx, form(t, "Age?", elicit.Integer("age").Required()))
			if err != nil {
				return nil, err
			}
			var a struct {
				Age int `json:"age"`
			}
			if err := r.Decode(&a); err != nil {
				return nil, err
			}
			return server.TextResult(fmt.Sprintf("%s is %d", n.Name, a.Age)), nil
		})
	}

	t.Run("a session made on one instance is served by the other", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{}`)
		if text, _ := toolText(t, c.on(ti.b).call(1, "tools/call", toolCall("echo", nil))); text != "echo 2025-11-25" {
			t.Errorf("tools/call on B = %q", text)
		}
		if got := c.on(ti.a).call(2, "ping", nil); string(got) != "{}" {
			t.Errorf("ping on A = %s", got)
		}
		if n := ti.b.h.SessionCount(); n != 1 {
			t.Errorf("B counts %d sessions, want the 1 made on A", n)
		}
		// DELETE on B ends it for A too.
		if s := c.on(ti.b).do(http.MethodDelete, nil, nil); s.status != http.StatusNoContent {
			t.Fatalf("DELETE on B: HTTP %d", s.status)
		}
		if s := c.on(ti.a).request(3, "tools/list", nil); s.status != http.StatusNotFound {
			t.Errorf("tools/list on A after DELETE on B: HTTP %d, want 404", s.status)
		}
	})

	t.Run("an answer POSTed to the other instance reaches the call", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{"elicitation":{}}`)
		call := c.on(ti.a).request("c1", "tools/call", toolCall("ask", nil))
		req := call.nextRequest("elicitation/create")
		var id string
		if err := json.Unmarshal(req.ID, &id); err != nil || !strings.Contains(id, ":") {
			t.Errorf("server request id %s: want a string naming the call's record and the instance (\"<call>:<instance>.<n>\")", req.ID)
		}
		c.on(ti.b).answer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		if text, _ := toolText(t, call.result(`"c1"`)); text != "accept Ada" {
			t.Errorf("result on A = %q", text)
		}
		// Two questions in sequence, both answers POSTed to B.
		call = c.on(ti.a).request("c2", "tools/call", toolCall("ask_two", nil))
		c.on(ti.b).answer(call.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"name": "Bob"}})
		c.on(ti.b).answer(call.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"age": 41}})
		if text, _ := toolText(t, call.result(`"c2"`)); text != "Bob is 41" {
			t.Errorf("result on A = %q", text)
		}
		// An error answer travels too.
		call = c.on(ti.a).request("c3", "tools/call", toolCall("ask", nil))
		c.on(ti.b).answerError(call.nextRequest("elicitation/create"), -32000, "user went away")
		var ce *server.ClientError
		if err := recv(t, handlerErr, "the handler's error"); !errors.As(err, &ce) || ce.Err.Message != "user went away" {
			t.Errorf("handler error = %v, want the client's error", err)
		}
		call.next() // the tool's error result
	})

	t.Run("a cancellation POSTed to the other instance stops the call", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{}`)
		call := c.on(ti.a).request(7, "tools/call", toolCall("wait", nil))
		if m := call.next(); m.Method != "notifications/message" {
			t.Fatalf("want the tool's log line, got %s", m.Raw)
		}
		c.on(ti.b).notify("notifications/cancelled", map[string]any{"requestId": 7, "reason": "changed my mind"})
		if err := recv(t, handlerErr, "the cancellation"); err == nil || !strings.Contains(err.Error(), "changed my mind") {
			t.Errorf("cause = %v, want the client's reason", err)
		}
		if rest := call.end(); len(rest) != 0 {
			t.Errorf("a cancelled call was answered: %s", rest[0].Raw)
		}
	})

	t.Run("DELETE on the other instance ends a parked call", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{"elicitation":{}}`)
		call := c.on(ti.a).request(1, "tools/call", toolCall("ask", nil))
		call.nextRequest("elicitation/create")
		if s := c.on(ti.b).do(http.MethodDelete, nil, nil); s.status != http.StatusNoContent {
			t.Fatalf("DELETE on B: HTTP %d", s.status)
		}
		if err := recv(t, handlerErr, "the handler's error"); err == nil || !strings.Contains(err.Error(), "deleted") {
			t.Errorf("parked call's error = %v, want the session deleted", err)
		}
		call.end()
	})

	t.Run("log level and subscriptions set on one instance hold on the other", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{}`)
		get := c.on(ti.a).get("text/event-stream")
		if get.status != http.StatusOK {
			t.Fatalf("GET on A: HTTP %d", get.status)
		}
		c.on(ti.b).call(1, "logging/setLevel", map[string]any{"level": "debug"})
		call := c.on(ti.a).request(2, "tools/call", toolCall("debug_log", nil))
		if m := call.next(); m.Method != "notifications/message" {
			t.Errorf("the debug line after setLevel on B: got %s", m.Raw)
		}
		call.result("2")
		c.on(ti.b).call(3, "resources/subscribe", map[string]any{"uri": "test://a"})
		// A hears of the subscription through the store's message: publish
		// updates until one reaches A's GET stream.
		deadline := time.Now().Add(waitLimit)
		for {
			ti.srvA.NotifyResourceUpdated("test://a")
			select {
			case m := <-get.msgs:
				if m.Method != "notifications/resources/updated" {
					t.Fatalf("GET on A: %s", m.Raw)
				}
			case <-time.After(20 * time.Millisecond):
				if time.Now().Before(deadline) {
					continue
				}
				t.Fatal("no resource update reached A's GET stream after the subscription on B")
			}
			break
		}
	})

	t.Run("a GET on the other instance takes the stream over", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{}`)
		getA := c.on(ti.a).get("text/event-stream")
		if getA.status != http.StatusOK {
			t.Fatalf("GET on A: HTTP %d", getA.status)
		}
		// Once A holds the stream, a GET on B takes it: A's ends.
		getB := c.on(ti.b).get("text/event-stream")
		if getB.status != http.StatusOK {
			t.Fatalf("GET on B: HTTP %d, want 200 (a client reconnecting through a balancer)", getB.status)
		}
		getA.end()
		addTool(t, ti.srvB, "marker", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		if m := getB.next(); m.Method != "notifications/tools/list_changed" {
			t.Errorf("GET on B: %s", m.Raw)
		}
		// And back: A takes it again, B's ends, A's lives on.
		getA = c.on(ti.a).get("text/event-stream")
		if getA.status != http.StatusOK {
			t.Fatalf("GET on A again: HTTP %d", getA.status)
		}
		getB.end()
		addTool(t, ti.srvA, "marker2", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		if m := getA.next(); m.Method != "notifications/tools/list_changed" {
			t.Errorf("GET on A again: %s", m.Raw)
		}
		getA.close()
		// B holds it for the late notification below.
		getB = c.on(ti.b).get("text/event-stream")
		if getB.status != http.StatusOK {
			t.Fatalf("GET on B again: HTTP %d", getB.status)
		}
		addTool(t, ti.srvB, "marker3", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		if m := getB.next(); m.Method != "notifications/tools/list_changed" {
			t.Errorf("GET on B again: %s", m.Raw)
		}
		// A notification a call on A sends after its stream closed goes to
		// B, which holds the GET stream now.
		if text, _ := toolText(t, c.on(ti.a).call(4, "tools/call", toolCall("complete_later", nil))); text != "started" {
			t.Fatalf("complete_later = %q", text)
		}
		close(released)
		if err := recv(t, handlerErr, "the late notification"); err != nil {
			t.Errorf("NotifyElicitationComplete after the call: %v", err)
		}
		m := getB.next()
		if m.Method != "notifications/elicitation/complete" || !strings.Contains(string(m.Params), "el-later") {
			t.Errorf("GET on B: %s, want the elicitation/complete sent on A", m.Raw)
		}
	})

	t.Run("the session outlives the instance that held a call", func(t *testing.T) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{}, register)
		c := connect(t, ti.a, `{"elicitation":{}}`)
		call := c.on(ti.a).request(1, "tools/call", toolCall("ask", nil))
		req := call.nextRequest("elicitation/create")
		// A goes away: its calls end, its listener closes.
		ti.a.h.Close()
		ti.a.ts.CloseClientConnections()
		if err := recv(t, handlerErr, "the parked call's end"); err == nil {
			t.Error("the parked call on A went on after A closed")
		}
		call.end()
		// The answer, POSTed to B, is refused (no call waits for it); the
		// session is served by B.
		c.on(ti.b).lateAnswer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		if text, _ := toolText(t, c.on(ti.b).call(2, "tools/call", toolCall("echo", nil))); text != "echo 2025-11-25" {
			t.Errorf("tools/call on B after A closed = %q", text)
		}
	})

	t.Run("another principal cannot use the session on either instance", func(t *testing.T) {
		store := newStore(t)
		auth := func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if sub := r.Header.Get("X-Test-Subject"); sub != "" {
					r = r.WithContext(server.ContextWithPrincipal(r.Context(), sub))
				}
				next.ServeHTTP(w, r)
			})
		}
		var fs [2]*fixture
		for i := range fs {
			srv := newLegacyServer(t, &legacy.Options{Store: store}, nil)
			register(srv)
			fs[i] = newFixtureWith(t, srv, auth)
		}
		c := connectWith(t, fs[0], `{}`, map[string]string{"X-Test-Subject": "alice"})
		for i, f := range fs {
			if s := c.on(f).requestWith(1, "ping", nil, map[string]string{"X-Test-Subject": "mallory"}); s.status != http.StatusNotFound {
				t.Errorf("mallory on instance %d: HTTP %d, want 404", i, s.status)
			}
			if s := c.on(f).requestWith(1, "ping", nil, map[string]string{"X-Test-Subject": "alice"}); s.status != http.StatusOK {
				t.Errorf("alice on instance %d: HTTP %d", i, s.status)
			}
		}
	})
}

// TestSessionQuotaAcrossInstances checks that a client's quota counts its
// sessions on every instance of the fleet.
func TestSessionQuotaAcrossInstances(t *testing.T) {
	sharedStores(t, func(t *testing.T, newStore func(t *testing.T) legacy.Store) {
		ti := newTwoInstances(t, newStore(t), legacy.Options{MaxSessionsPerClient: 3}, func(*server.Server) {})
		got := map[int]int{}
		for i := range 6 {
			c := newClient(t, ti.a)
			if i%2 == 1 {
				c.on(ti.b)
			}
			s := c.request(0, "initialize", initParams(legacyVersion, `{}`))
			got[s.status]++
			if s.status == http.StatusTooManyRequests && s.header.Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		}
		if got[http.StatusOK] != 3 || got[http.StatusTooManyRequests] != 3 {
			t.Errorf("6 initialize from one address over two instances: %v, want 3 sessions and 3 refused", got)
		}
	})
}

// TestIdleAcrossInstances checks that a session in
// use on one instance (an open GET stream) does not expire, and that one
// that is not used expires, whichever instance last served it.
func TestIdleAcrossInstances(t *testing.T) {
	sharedStores(t, func(t *testing.T, newStore func(t *testing.T) legacy.Store) {
		const idle = 300 * time.Millisecond
		ti := newTwoInstances(t, newStore(t), legacy.Options{SessionIdle: idle, KeepAlive: 20 * time.Millisecond}, func(*server.Server) {})
		streaming, idleC := connect(t, ti.a, `{}`), connect(t, ti.a, `{}`)
		get := streaming.on(ti.a).get("text/event-stream")
		if get.status != http.StatusOK {
			t.Fatalf("GET: HTTP %d", get.status)
		}
		time.Sleep(3 * idle)
		if got := streaming.on(ti.b).call(1, "ping", nil); string(got) != "{}" {
			t.Errorf("the session with a GET stream on A, pinged on B: %s", got)
		}
		if s := idleC.on(ti.b).request(2, "ping", nil); s.status != http.StatusNotFound {
			t.Errorf("the idle session on B: HTTP %d, want 404", s.status)
		}
	})
}
