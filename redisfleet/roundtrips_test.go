package redisfleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// The Redis round trips of each fleet operation, counted through the real
// stores on a real redis-server: every instance has its own client with a
// hook that records each round trip (a command, or a pipeline or
// transaction sent as one). The tables below are what the operations
// cost; a change that adds a round trip fails here, and one that removes
// one must update the table (and docs/deployment.md, which gives it).
//
// Each count ends once every instance has been quiet for a moment, so
// what an operation sets off after its response (a call's cleanup, a
// task's next step) counts with it. Instances also talk to Redis on their
// own (heartbeats, the periodic reread of the answers waited for): an
// operation is run several times and the count seen most often counts, so
// a background tick that lands in one run does not.

// tripCounter is a redis.Hook that records every round trip: a command
// as its name and the kind of its first key, a pipeline as the list of
// its commands.
type tripCounter struct {
	mu    sync.Mutex
	trips []string
}

func (c *tripCounter) add(s string) {
	c.mu.Lock()
	c.trips = append(c.trips, s)
	c.mu.Unlock()
}

// take returns the round trips recorded since the last take.
func (c *tripCounter) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.trips
	c.trips = nil
	return out
}

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !heartbeat(cmd) {
			c.add(describe(cmd))
		}
		return next(ctx, cmd)
	}
}

// heartbeat reports whether cmd is an instance's own periodic heartbeat
// (a 2025-11-25 event store's every 2 s, the tasks' every lease/3), which
// no operation sets off: it is left out of the counts, where it would
// land in a run at random.
func heartbeat(cmd redis.Cmder) bool {
	args := cmd.Args()
	if cmd.Name() != "set" || len(args) < 2 {
		return false
	}
	key := fmt.Sprint(args[1])
	return strings.Contains(key, "sessions:alive:") || strings.Contains(key, "tasks:beat:")
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		parts := make([]string, len(cmds))
		for i, cmd := range cmds {
			parts[i] = describe(cmd)
		}
		c.add("[" + strings.Join(parts, " | ") + "]")
		return next(ctx, cmds)
	}
}

// describe names a command and the kind of key it works on.
func describe(cmd redis.Cmder) string {
	args := cmd.Args()
	name := cmd.Name()
	key := ""
	switch name {
	case "evalsha", "eval":
		if len(args) > 3 {
			key = fmt.Sprint(args[3])
		}
	case "multi", "exec":
	default:
		if len(args) > 1 {
			key = fmt.Sprint(args[1])
		}
	}
	return strings.TrimSpace(name + " " + keyKind(key))
}

// keyKind is the part of a key that says what it holds, without ids.
func keyKind(key string) string {
	for _, k := range []string{"redeemed:", "tasks:task:", "tasks:beat:", "tasks:wake:", "{sessions}:s:", "{sessions}:all", "{sessions}:owner:", "{channels}", "call:{", "ev:{"} {
		if strings.Contains(key, k) {
			return strings.TrimSuffix(strings.TrimSuffix(k, ":"), "{")
		}
	}
	return key
}

// rtInstance is one instance of the fleet under count.
type rtInstance struct {
	srv   *server.Server
	trips *tripCounter
}

// newRTFleet starts n instances sharing rs through stores on clients of
// their own, each counted.
func newRTFleet(t *testing.T, rs *testredis.Server, n int) []*rtInstance {
	t.Helper()
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k", Secret: []byte(strings.Repeat("r", 32))})
	if err != nil {
		t.Fatal(err)
	}
	confirm, err := elicit.NewForm("Proceed?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	var out []*rtInstance
	for range n {
		in := &rtInstance{trips: &tripCounter{}}
		rdb := rs.Client(t)
		rdb.AddHook(in.trips)
		f := redisfleet.New(rdb, redisfleet.Options{Prefix: "rt:"})
		ledger := f.Ledger()
		in.srv, err = server.New(mcp.Implementation{Name: "rt", Version: "1"}, &server.Options{
			StateKeys: ring,
			Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
			Fanout:    f.Fanout(),
			// A long lease: the heartbeats stay out of the counts.
			Tasks:  server.TaskOptions{Store: f.Tasks(), Lease: time.Minute},
			Legacy: legacy.New(&legacy.Options{Store: f.Sessions()}),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = in.srv.Close() })
		add := func(name string, h server.ToolHandler, opts ...server.ToolOption) {
			t.Helper()
			if err := in.srv.AddTool(server.Tool{Name: name}, h, opts...); err != nil {
				t.Fatal(err)
			}
		}
		add("hello", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			return server.TextResult("hello"), nil
		})
		ask := func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			res, err := req.Elicit(ctx, confirm)
			if err != nil {
				return nil, err
			}
			return server.TextResult("answered " + string(res.Action)), nil
		}
		add("ask", ask)
		add("task", ask, server.RunAsTask(server.TaskRequired))
		add("transfer", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			res, err := req.Elicit(ctx, confirm)
			if err != nil {
				return nil, err
			}
			if res.Action != elicit.ActionAccept {
				return server.ErrorResult("declined"), nil
			}
			if err := req.Redeem(ctx, ledger); err != nil {
				return nil, err
			}
			return server.TextResult("transferred"), nil
		})
		out = append(out, in)
	}
	return out
}

// count is the number of round trips recorded and not yet taken.
func (c *tripCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.trips)
}

// settle waits until no instance has made a round trip for quiet (at
// most waitLimit), so that what an operation set off after its response
// (a call's cleanup, a task's next step) counts with it, not with the
// next.
func settle(ins []*rtInstance) {
	const quiet = 250 * time.Millisecond
	n, since, deadline := -1, time.Now(), time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		m := 0
		for _, in := range ins {
			m += in.trips.count()
		}
		if m != n {
			n, since = m, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// take returns what every instance sent since the last take, by instance,
// once they are quiet.
func takeAll(ins []*rtInstance) [][]string {
	settle(ins)
	out := make([][]string, len(ins))
	for i, in := range ins {
		out[i] = in.trips.take()
	}
	return out
}

func total(trips [][]string) int {
	n := 0
	for _, t := range trips {
		n += len(t)
	}
	return n
}

// typical runs op reps times, each time counting the round trips of
// every instance between its start and its end, and returns a run with
// the count seen most often (the smaller on a tie): a background tick
// that lands in one run, or a late round trip that slips into the next,
// does not decide the count.
func typical(t *testing.T, ins []*rtInstance, reps int, op func(rep int)) [][]string {
	t.Helper()
	runs := make([][][]string, 0, reps)
	for rep := range reps {
		takeAll(ins)
		op(rep)
		runs = append(runs, takeAll(ins))
	}
	return mostOften(runs)
}

// mostOften returns the run whose total is the most frequent, the
// smaller on a tie.
func mostOften(runs [][][]string) [][]string {
	seen := map[int]int{}
	for _, r := range runs {
		seen[total(r)]++
	}
	var best [][]string
	for _, r := range runs {
		n := total(r)
		if best == nil || seen[n] > seen[total(best)] || (seen[n] == seen[total(best)] && n < total(best)) {
			best = r
		}
	}
	return best
}

// checkTrips compares counted round trips, by instance, with want.
func checkTrips(t *testing.T, what string, got [][]string, want ...int) {
	t.Helper()
	counts := make([]int, len(got))
	for i, g := range got {
		counts[i] = len(g)
	}
	t.Logf("%s: %d round trips %v: %q", what, total(got), counts, got)
	if !slices.Equal(counts, want) {
		t.Errorf("%s: round trips by instance %v, want %v: %q", what, counts, want, got)
	}
}

var accept = map[string]any{"action": "accept", "content": map[string]any{"ok": true}}

func acceptAll(context.Context, *elicit.Request) (*elicit.Result, error) {
	return &elicit.Result{Action: elicit.ActionAccept, Content: json.RawMessage(`{"ok":true}`)}, nil
}

const reps = 5

// A confirmed 2026-07-28 flow with the single-use ledger: round 1 on one
// instance (input_required: no Redis), round 2 on another (the
// redemption).
func TestRoundTripsConfirmedFlow(t *testing.T) {
	rs := testredis.Start(t)
	ins := newRTFleet(t, rs, 2)
	ctx := context.Background()
	c, err := mcptest.New(mcptest.RoundRobin(mcptest.Handler(ins[0].srv), mcptest.Handler(ins[1].srv)),
		&mcptest.Options{Elicitation: acceptAll})
	if err != nil {
		t.Fatal(err)
	}
	flow := func(int) {
		r, err := c.CallTool(ctx, "transfer", nil)
		if err != nil || r.Text() != "transferred" {
			t.Fatalf("transfer: %v, %v", r, err)
		}
	}
	flow(0) // loads the script
	got := typical(t, ins, reps, flow)
	checkTrips(t, "confirmed flow (round 1 on A, round 2 on B)", got, 0, 1)
}

// A 2025-11-25 session: its creation, a plain call in it, and a blocking
// call whose answer crosses instances (the call parked on A, the answer
// POSTed to B).
func TestRoundTripsLegacySession(t *testing.T) {
	rs := testredis.Start(t)
	ins := newRTFleet(t, rs, 2)
	ctx := context.Background()
	connect := func() *mcptest.Client {
		// Round robin: initialize on A, notifications/initialized on B,
		// then alternately.
		c, err := mcptest.New(mcptest.RoundRobin(mcptest.Handler(ins[0].srv), mcptest.Handler(ins[1].srv)),
			&mcptest.Options{Protocol: mcp.LegacyProtocolVersion, Elicitation: acceptAll})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Connect(ctx); err != nil {
			t.Fatal(err)
		}
		return c
	}
	connect() // loads the scripts
	got := typical(t, ins, reps, func(int) { connect() })
	checkTrips(t, "session: initialize on A, notifications/initialized on B", got, 1, 1)

	c := connect()
	hello := func(int) {
		r, err := c.CallTool(ctx, "hello", nil)
		if err != nil || r.Text() != "hello" {
			t.Fatalf("hello: %v, %v", r, err)
		}
	}
	hello(0)
	hello(1) // next on A
	got = typical(t, ins, 2*reps, func(rep int) {
		hello(rep)
		hello(rep) // on the other instance: each run is one call on A and one on B
	})
	checkTrips(t, "plain call in a session (one on A, one on B)", got, 1, 1)

	// The call on A, the answer POSTed to B.
	ask := func(int) {
		r, err := c.CallTool(ctx, "ask", nil)
		if err != nil || r.Text() != "answered accept" {
			t.Fatalf("ask: %v, %v", r, err)
		}
	}
	// The wake-up that B publishes with the answer (in the same script)
	// reaches A's subscription: watch the channels.
	sub := rs.Client(t).PSubscribe(ctx, "rt:sessions:{channels}:to:*")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	ask(0)
	select {
	case m := <-sub.Channel():
		if !strings.Contains(m.Payload, `"kind":"reply"`) {
			t.Fatalf("the message published with the answer: %s", m.Payload)
		}
	case <-time.After(waitLimit):
		t.Fatal("no wake-up was published with the answer")
	}
	got = typical(t, ins, reps, ask)
	// A: touch, park, the call's record written with its question (issue
	// 32: a crash of A loses no waiting call), the stream opened with the
	// question, the answer taken (its park let go in the same script: no
	// unpark), the record written with the answer (an acknowledged answer
	// outlives A), the result kept with the stream's end, the record
	// dropped. B: the session read, the answer kept and A woken in one
	// script.
	checkTrips(t, "blocking call on A, its answer POSTed to B", got, 8, 2)
}

// A task with one question: created on A (where it runs and asks),
// polled on B, answered on C (the owner A resumes it and stores the
// result), its result read on B.
func TestRoundTripsTask(t *testing.T) {
	rs := testredis.Start(t)
	ins := newRTFleet(t, rs, 3)
	ctx := context.Background()
	clients := make([]*mcptest.Client, 3)
	for i, in := range ins {
		c, err := mcptest.New(mcptest.Handler(in.srv), &mcptest.Options{Tasks: true, Elicitation: acceptAll})
		if err != nil {
			t.Fatal(err)
		}
		clients[i] = c
	}
	store := redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "rt:"}).Tasks() // uncounted
	waitStatus := func(id string, want mcp.TaskStatus) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for {
			r, err := store.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s is %s, want %s", id, r.Status, want)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	get := func(c *mcptest.Client, id string) map[string]any {
		t.Helper()
		r, err := c.Do(ctx, "tasks/get", map[string]any{"taskId": id}, mcptest.WithHeader("Mcp-Name", id))
		if err != nil || r.Error != nil {
			t.Fatalf("tasks/get: %v, %v", r, err)
		}
		var m map[string]any
		if err := json.Unmarshal(r.Result, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	// pollOn is the instance whose tasks/get sees the question; the
	// answer goes to C.
	run := func(pollOn int) (create, poll, answer, result [][][]string) {
		for rep := range reps + 1 {
			takeAll(ins)
			task, err := clients[0].StartTask(ctx, "task", nil)
			if err != nil {
				t.Fatal(err)
			}
			waitStatus(task.ID, mcp.TaskInputRequired)
			c1 := takeAll(ins)
			st := get(clients[pollOn], task.ID)
			irs, _ := st["inputRequests"].(map[string]any)
			if st["status"] != "input_required" || len(irs) != 1 {
				t.Fatalf("tasks/get: %v", st)
			}
			p1 := takeAll(ins)
			answers := map[string]any{}
			for k := range irs {
				answers[k] = accept
			}
			r, err := clients[2].Do(ctx, "tasks/update", map[string]any{"taskId": task.ID, "inputResponses": answers},
				mcptest.WithHeader("Mcp-Name", task.ID))
			if err != nil || r.Error != nil {
				t.Fatalf("tasks/update: %v, %v", r, err)
			}
			waitStatus(task.ID, mcp.TaskCompleted)
			a1 := takeAll(ins)
			if st := get(clients[1], task.ID); st["status"] != "completed" {
				t.Fatalf("tasks/get: %v", st)
			}
			r1 := takeAll(ins)
			if rep == 0 {
				continue // loaded the scripts
			}
			create, poll, answer, result = append(create, c1), append(poll, p1), append(answer, a1), append(result, r1)
		}
		return create, poll, answer, result
	}
	create, poll, answer, result := run(1)
	// A: the task created, the question written (the handler finds the
	// answer in the record A rereads on the wake-up: no read of its own).
	checkTrips(t, "task: tools/call on A, until it asks", mostOften(create), 2, 0, 0)
	checkTrips(t, "task: tasks/get on B (input_required)", mostOften(poll), 0, 1, 0)
	// A's handler returned when it asked: the question waits as the
	// record. C: the read its checks need, then the answer written and the
	// task claimed in one script; C runs the handler again and writes the
	// result. A does nothing.
	checkTrips(t, "task: tasks/update on C, until C stored the result", mostOften(answer), 0, 0, 3)
	checkTrips(t, "task: tasks/get on B (completed)", mostOften(result), 0, 1, 0)

	// The question seen with tasks/get on C, which then answers: C holds
	// the record's current bytes, so its checks and the write (with the
	// claim) need no read; then the result.
	_, poll, answer, _ = run(2)
	checkTrips(t, "task: tasks/get on C (input_required)", mostOften(poll), 0, 0, 1)
	checkTrips(t, "task: tasks/update on C after its tasks/get, until C stored the result", mostOften(answer), 0, 0, 2)
}
