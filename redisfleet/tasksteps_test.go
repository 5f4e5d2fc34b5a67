package redisfleet_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

// UpdateSignal wakes the owner only when it wrote, in the same script,
// on one Redis server and on a three-master Redis Cluster (the tasks'
// channels are plain pub/sub, which a script on any slot publishes to).
func TestUpdateSignal(t *testing.T) {
	t.Run("server", func(t *testing.T) {
		testUpdateSignal(t, testredis.Start(t).Client(t))
	})
	t.Run("cluster", func(t *testing.T) {
		testUpdateSignal(t, testredis.StartCluster(t).ClusterClient(t))
	})
}

func testUpdateSignal(t *testing.T, rdb redis.UniversalClient) {
	ctx := context.Background()
	s := redisfleet.New(rdb, redisfleet.Options{Prefix: "us:"}).Tasks().(*redisfleet.TaskStore)
	idle, busy := storetest.TaskRecord(time.Minute), storetest.TaskRecord(time.Minute)
	for _, r := range []*server.TaskRecord{idle, busy} {
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	got := make(chan string, 16)
	go func() { _ = s.Signals(sctx, "owner", func(id string) { got <- id }) }()
	// The subscription may take a moment: write until a wake-up arrives.
	deadline := time.Now().Add(waitLimit)
	for arrived := false; !arrived; {
		rec, err := s.UpdateSignal(ctx, busy.ID, func(r *server.TaskRecord) error {
			r.StatusMessage += "w"
			return nil
		}, "owner")
		if err != nil || !strings.HasSuffix(rec.StatusMessage, "w") {
			t.Fatalf("UpdateSignal = %+v, %v", rec, err)
		}
		select {
		case id := <-got:
			arrived = id == busy.ID
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no wake-up reached the owner")
			}
		}
	}
	time.Sleep(100 * time.Millisecond)
	for len(got) > 0 {
		<-got
	}
	// No write, no wake-up: the next message is the next write's.
	if _, err := s.UpdateSignal(ctx, idle.ID, func(*server.TaskRecord) error { return server.ErrTaskNoUpdate }, "owner"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateSignal(ctx, busy.ID, func(r *server.TaskRecord) error { r.StatusMessage = "done"; return nil }, "owner"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		if id != busy.ID {
			t.Fatalf("woken about %s, want only the task written (%s)", id, busy.ID)
		}
	case <-time.After(waitLimit):
		t.Fatal("no wake-up for the write")
	}
	if r, err := s.Get(ctx, busy.ID); err != nil || r.StatusMessage != "done" {
		t.Fatalf("Get = %+v, %v", r, err)
	}
	// Another owner's channel hears nothing of it.
	if _, err := s.UpdateSignal(ctx, busy.ID, func(r *server.TaskRecord) error { r.StatusMessage = "other"; return nil }, "someone-else"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-got:
		t.Fatalf("woken about %s, signalled to another owner", id)
	case <-time.After(200 * time.Millisecond):
	}
}

// An update on a stale remembered record loses its compare-and-set; the
// script hands back the current record, so the retry is the script again,
// with no read in between, and nothing is lost.
func TestUpdateRetryNeedsNoRead(t *testing.T) {
	rs := testredis.Start(t)
	ctx := context.Background()
	trips := &tripCounter{}
	ca := rs.Client(t)
	ca.AddHook(trips)
	a := redisfleet.New(ca, redisfleet.Options{Prefix: "retry:"}).Tasks().(*redisfleet.TaskStore)
	b := redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "retry:"}).Tasks().(*redisfleet.TaskStore)
	r := storetest.TaskRecord(time.Minute)
	if err := a.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	mark := func(s *redisfleet.TaskStore, m string) {
		t.Helper()
		if _, err := s.Update(ctx, r.ID, func(r *server.TaskRecord) error { r.StatusMessage += m; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	mark(a, "a") // loads the script; a remembers what it wrote
	mark(b, "b") // a's memory is stale now
	trips.take()
	mark(a, "a")
	if got := trips.take(); len(got) != 2 || got[0] != "evalsha tasks:task" || got[1] != "evalsha tasks:task" {
		t.Errorf("an update on a stale record: round trips %q, want the script twice", got)
	}
	if rec, err := b.Get(ctx, r.ID); err != nil || rec.StatusMessage != "aba" {
		t.Fatalf("Get = %+v, %v; want the marks a, b, a", rec, err)
	}
	mark(a, "a") // a holds the current record: the script alone
	if got := trips.take(); len(got) != 1 {
		t.Errorf("an update on the current record: round trips %q, want the script once", got)
	}
}
