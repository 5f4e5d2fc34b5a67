package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// parkTools counts the runs of its tools' handlers and the handlers
// running now.
type parkTools struct {
	runs, in atomic.Int64
}

// register adds ask_two (a name, then an age, the answers in the
// result) and ask_once (a name, with server.RunsOnce).
func (pt *parkTools) register(t *testing.T) func(srv *server.Server) {
	return func(srv *server.Server) {
		ageSchema, err := elicit.NewSchema(elicit.Integer("age").Required())
		if err != nil {
			t.Fatal(err)
		}
		err = srv.AddTool(server.Tool{Name: "ask_two"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			pt.runs.Add(1)
			pt.in.Add(1)
			defer pt.in.Add(-1)
			if err := req.Log(ctx, slog.LevelInfo, "test", "asking"); err != nil {
				return nil, err
			}
			r1, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				return nil, err
			}
			r2, err := req.CreateFormElicitation(ctx, "Age?", ageSchema)
			if err != nil {
				return nil, err
			}
			var n struct {
				Name string `json:"name"`
			}
			var a struct {
				Age int `json:"age"`
			}
			_ = r1.Decode(&n)
			_ = r2.Decode(&a)
			return server.TextResult(fmt.Sprintf("%s is %d", n.Name, a.Age)), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		err = srv.AddTool(server.Tool{Name: "ask_once"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			pt.runs.Add(1)
			r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				return nil, err
			}
			var n struct {
				Name string `json:"name"`
			}
			_ = r.Decode(&n)
			return server.TextResult("once " + n.Name), nil
		}, server.RunsOnce())
		if err != nil {
			t.Fatal(err)
		}
	}
}

// parkStores runs test with two instances sharing each store that keeps
// waiting calls: memory (one process), Redis and a Redis Cluster.
func parkStores(t *testing.T, opts legacy.Options, test func(t *testing.T, ti *twoInstances, pt *parkTools)) {
	t.Run("memory", func(t *testing.T) {
		pt := &parkTools{}
		o := opts
		o.Events = legacy.NewMemoryEventStore(0)
		test(t, newTwoInstances(t, legacy.NewMemoryStore(nil), o, pt.register(t)), pt)
	})
	t.Run("redis", func(t *testing.T) {
		pt := &parkTools{}
		rs := testredis.Start(t)
		test(t, newTwoInstances(t, redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:"}).Sessions(), opts, pt.register(t)), pt)
	})
	t.Run("redis cluster", func(t *testing.T) {
		pt := &parkTools{}
		rc := testredis.StartCluster(t)
		test(t, newTwoInstances(t, redisfleet.New(rc.ClusterClient(t), redisfleet.Options{Prefix: "test:"}).Sessions(), opts, pt.register(t)), pt)
	})
}

// postCall POSTs a tools/call of session c to instance f and reads its SSE
// stream.
func postCall(t *testing.T, c *wireClient, f *fixture, id any, tool string) *rawSSE {
	t.Helper()
	return readSSE(c.rawRequest(http.MethodPost, instanceURL(f), mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": toolCall(tool, nil)}), nil))
}

// resume GETs the call's stream from after event id on instance f.
func resume(t *testing.T, c *wireClient, f *fixture, after string) *rawSSE {
	t.Helper()
	return readSSE(c.rawRequest(http.MethodGet, instanceURL(f), nil, map[string]string{"Last-Event-ID": after, "Accept": "text/event-stream"}))
}

// ended waits for the end of s and fails if a response came on it.
func ended(t *testing.T, s *rawSSE, what string) {
	t.Helper()
	for {
		select {
		case e, ok := <-s.ch:
			if !ok {
				return
			}
			if e.msg.IsResponse() {
				t.Fatalf("%s: a response came: %s", what, e.msg.Raw)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the stream did not end", what)
		}
	}
}

// nextOf returns the next event of s that is method (skipping log lines).
func nextOf(t *testing.T, s *rawSSE, method string) sseEvent {
	t.Helper()
	for {
		e := s.next(t)
		if e.msg.Method == "notifications/message" {
			continue
		}
		if e.msg.Method != method {
			t.Fatalf("want %s, got %s", method, e.msg.Raw)
		}
		return e
	}
}

// A call whose question is not answered within HoldFor parks: its
// handler returns, its POST stream ends (SSE polling), and no handler
// runs while the person thinks. Each answer, POSTed to either instance,
// runs the handler again there with the answers recorded so far; the
// client reads what follows on the stream it resumes, on either instance.
func TestParkedCallMoves(t *testing.T) {
	parkStores(t, legacy.Options{HoldFor: -1}, func(t *testing.T, ti *twoInstances, pt *parkTools) {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		post := postCall(t, c, ti.a, "c1", "ask_two")
		q1 := nextOf(t, post, "elicitation/create")
		if q1.id == "" {
			t.Fatal("the question has no event id")
		}
		ended(t, post, "the POST stream after the first question")
		waitFor(t, "the handler to return", func() bool { return pt.in.Load() == 0 })

		if st := c.on(ti.b).answerWith(q1.msg, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil); st != http.StatusAccepted {
			t.Fatalf("answer on B: HTTP %d", st)
		}
		s := resume(t, c, ti.b, q1.id)
		q2 := nextOf(t, s, "elicitation/create")
		if !strings.Contains(string(q2.msg.Raw), "Age?") {
			t.Fatalf("second question %s, want Age?", q2.msg.Raw)
		}
		waitFor(t, "the second run to park", func() bool { return pt.in.Load() == 0 })
		if st := c.on(ti.a).answerWith(q2.msg, map[string]any{"action": "accept", "content": map[string]any{"age": 36}}, nil); st != http.StatusAccepted {
			t.Fatalf("answer on A: HTTP %d", st)
		}
		res := s.next(t)
		for res.msg.Method == "notifications/message" {
			res = s.next(t)
		}
		if text, _ := toolText(t, res.msg.Result); text != "Ada is 36" || string(res.msg.ID) != `"c1"` {
			t.Fatalf("response %s, want Ada is 36 for c1", res.msg.Raw)
		}
		if n := pt.runs.Load(); n != 3 {
			t.Errorf("the handler ran %d times, want 3 (the first run and one per answer)", n)
		}
		// Answered and ended: a second answer to the same question is refused.
		if st := c.on(ti.b).answerWith(q2.msg, map[string]any{"action": "accept", "content": map[string]any{"age": 1}}, nil); st != http.StatusBadRequest {
			t.Errorf("a second answer: HTTP %d, want 400", st)
		}
	})
}

// A quick answer goes straight to the handler waiting for it, which runs
// once; a RunsOnce tool never parks, whatever HoldFor says.
func TestQuickAnswerAndRunsOnce(t *testing.T) {
	parkStores(t, legacy.Options{}, func(t *testing.T, ti *twoInstances, pt *parkTools) {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		post := postCall(t, c, ti.a, 1, "ask_two")
		c.on(ti.b).answer(nextOf(t, post, "elicitation/create").msg, map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}})
		c.on(ti.a).answer(nextOf(t, post, "elicitation/create").msg, map[string]any{"action": "accept", "content": map[string]any{"age": 7}})
		if e := post.next(t); string(e.msg.ID) != "1" || !strings.Contains(string(e.msg.Raw), "Bo is 7") {
			t.Fatalf("response %s", e.msg.Raw)
		}
		if n := pt.runs.Load(); n != 1 {
			t.Errorf("the handler ran %d times, want 1", n)
		}
	})
	pt := &parkTools{}
	ti := newTwoInstances(t, legacy.NewMemoryStore(nil), legacy.Options{HoldFor: -1, Events: legacy.NewMemoryEventStore(0)}, pt.register(t))
	c := connect(t, ti.a, `{"elicitation":{}}`)
	post := postCall(t, c, ti.a, 2, "ask_once")
	q := nextOf(t, post, "elicitation/create")
	time.Sleep(100 * time.Millisecond)
	c.on(ti.a).answer(q.msg, map[string]any{"action": "accept", "content": map[string]any{"name": "Cy"}})
	if e := post.next(t); !strings.Contains(string(e.msg.Raw), "once Cy") {
		t.Fatalf("RunsOnce: response %s, want it on the POST stream", e.msg.Raw)
	}
	if n := pt.runs.Load(); n != 1 {
		t.Errorf("RunsOnce: the handler ran %d times, want 1", n)
	}
}

// A drain parks every waiting call at once: Shutdown returns within a
// second, and the call finishes on the other instance.
func TestDrainParksWaitingCalls(t *testing.T) {
	parkStores(t, legacy.Options{HoldFor: time.Hour}, func(t *testing.T, ti *twoInstances, pt *parkTools) {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		post := postCall(t, c, ti.a, "d1", "ask_two")
		q1 := nextOf(t, post, "elicitation/create")
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := ti.srvA.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("Shutdown took %v with only a waiting call; want well under a second", d)
		}
		ended(t, post, "the POST stream at the drain")
		c.on(ti.b).answer(q1.msg, map[string]any{"action": "accept", "content": map[string]any{"name": "Di"}})
		s := resume(t, c, ti.b, q1.id)
		q2 := nextOf(t, s, "elicitation/create")
		c.on(ti.b).answer(q2.msg, map[string]any{"action": "accept", "content": map[string]any{"age": 50}})
		res := s.next(t)
		for res.msg.Method == "notifications/message" {
			res = s.next(t)
		}
		if !strings.Contains(string(res.msg.Raw), "Di is 50") {
			t.Fatalf("response %s", res.msg.Raw)
		}
	})
}

// A parked call that its client cancels is gone: its answer is refused.
// A parked call whose question times out runs again with the timeout, on
// the instance of the stream that resumes it.
func TestParkedCallCancelAndTimeout(t *testing.T) {
	parkStores(t, legacy.Options{HoldFor: -1, CallTimeout: 300 * time.Millisecond}, func(t *testing.T, ti *twoInstances, pt *parkTools) {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		post := postCall(t, c, ti.a, "x", "ask_two")
		q := nextOf(t, post, "elicitation/create")
		ended(t, post, "the POST stream")
		c.on(ti.b).notify("notifications/cancelled", map[string]any{"requestId": "x"})
		if st := c.on(ti.a).answerWith(q.msg, map[string]any{"action": "accept", "content": map[string]any{"name": "No"}}, nil); st != http.StatusBadRequest {
			t.Errorf("answer after the cancellation: HTTP %d, want 400", st)
		}

		post = postCall(t, c, ti.a, "y", "ask_two")
		q = nextOf(t, post, "elicitation/create")
		ended(t, post, "the POST stream")
		time.Sleep(500 * time.Millisecond) // past the question's CallTimeout
		s := resume(t, c, ti.b, q.id)
		res := s.next(t)
		for res.msg.Method == "notifications/message" {
			res = s.next(t)
		}
		var r struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(res.msg.Result, &r)
		if string(res.msg.ID) != `"y"` || !r.IsError || !strings.Contains(string(res.msg.Raw), "timed out") {
			t.Fatalf("after the timeout: %s, want y's error result saying it timed out", res.msg.Raw)
		}
	})
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Calls that wait for their users hold no goroutine: n calls parked on
// their first question (HoldFor negative: at once), their POST streams
// ended and the client's connections closed, leave the process's
// goroutines where they were before; answered, every one finishes.
func TestParkedCallsHoldNoGoroutine(t *testing.T) {
	const n = 300
	pt := &parkTools{}
	ti := newTwoInstances(t, legacy.NewMemoryStore(nil), legacy.Options{HoldFor: -1, Events: legacy.NewMemoryEventStore(0), MaxSessionsPerClient: -1}, pt.register(t))
	c := connect(t, ti.a, `{"elicitation":{}}`)
	settleGoroutines := func() int {
		http.DefaultClient.CloseIdleConnections()
		prev := -1
		for range 100 {
			time.Sleep(20 * time.Millisecond)
			g := runtime.NumGoroutine()
			if g == prev {
				return g
			}
			prev = g
		}
		return prev
	}
	before := settleGoroutines()
	asks := make([]sseEvent, n)
	for i := range n {
		post := postCall(t, c, ti.a, fmt.Sprintf("p%d", i), "ask_two")
		asks[i] = nextOf(t, post, "elicitation/create")
		ended(t, post, "a parked call's POST stream")
		post.resp.Body.Close()
	}
	waitFor(t, "the handlers to return", func() bool { return pt.in.Load() == 0 })
	after := settleGoroutines()
	t.Logf("goroutines: %d before, %d with %d calls waiting as records", before, after, n)
	if after > before+5 {
		t.Errorf("%d calls waiting for their users hold %d goroutines, want none", n, after-before)
	}
	for i := range n {
		if st := c.answerWith(asks[i].msg, map[string]any{"action": "accept", "content": map[string]any{"name": "N"}}, nil); st != http.StatusAccepted {
			t.Fatalf("answer %d: HTTP %d", i, st)
		}
	}
	waitFor(t, "every call to run on to its second question", func() bool { return pt.runs.Load() == 2*n && pt.in.Load() == 0 })
}
