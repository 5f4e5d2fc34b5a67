package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/contract"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// Tasks runs the server.TaskStore contract against stores made by
// newStore, each check in its own subtest. The stores read
// the wall clock; expiry is checked with records that expire a moment after
// they are created.
func Tasks(t *testing.T, newStore func(t *testing.T) server.TaskStore) {
	contract.Run(t, taskChecks, newStore)
}

// CheckTasks runs the server.TaskStore contract against stores made by
// newStore, each empty, and returns an error describing every failure, or
// nil. Unlike Tasks it needs
// no *testing.T, so a program (or an Example) can check a store.
func CheckTasks(newStore func() (server.TaskStore, error)) error {
	return contract.Test("storetest.CheckTasks", taskChecks, newStore)
}

// taskChecks are the contract, one check per entry, each on an empty store.
var taskChecks = []contract.Check[server.TaskStore]{
	{Name: "CreateGet", Run: testTaskCreateGet},
	{Name: "Copies", Run: testTaskCopies},
	{Name: "Update", Run: testTaskUpdate},
	{Name: "ConcurrentUpdates", Run: testTaskConcurrentUpdates},
	{Name: "Expiry", Run: testTaskExpiry},
	{Name: "Signals", Run: testTaskSignals},
	{Name: "Heartbeats", Run: testTaskHeartbeats},
}

// testTaskHeartbeats: a store that keeps heartbeats returns the latest until
// of each instance (to the millisecond), and the zero time for one that
// never beat; SuspectSince survives a round trip.
func testTaskHeartbeats(t tb, s server.TaskStore) {
	hb, ok := s.(server.TaskHeartbeats)
	if !ok {
		return // the store keeps no heartbeats
	}
	ctx := context.Background()
	if last, err := hb.LastBeat(ctx, "nobody"); err != nil || !last.IsZero() {
		t.Errorf("LastBeat of an instance that never beat = %v, %v; want the zero time", last, err)
	}
	until := time.Now().Add(time.Minute).Truncate(time.Millisecond)
	for _, u := range []time.Time{until.Add(-time.Second), until} {
		if err := hb.Beat(ctx, "a", u); err != nil {
			t.Fatal(err)
		}
	}
	if last, err := hb.LastBeat(ctx, "a"); err != nil || !last.Equal(until) {
		t.Errorf("LastBeat = %v, %v; want %v", last, err, until)
	}
	r := TaskRecord(time.Minute)
	r.SuspectSince = time.Now().Truncate(time.Millisecond)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil || !got.SuspectSince.Equal(r.SuspectSince) {
		t.Errorf("SuspectSince after a round trip = %v, %v; want %v", got.SuspectSince, err, r.SuspectSince)
	}
}

var idSeq struct {
	mu sync.Mutex
	n  int
}

// TaskRecord returns a working record with a fresh id that expires ttl from
// now.
func TaskRecord(ttl time.Duration) *server.TaskRecord {
	idSeq.mu.Lock()
	idSeq.n++
	n := idSeq.n
	idSeq.mu.Unlock()
	now := time.Now().Truncate(time.Millisecond)
	return &server.TaskRecord{
		ID:             fmt.Sprintf("test-task-%d-%d", now.UnixNano(), n),
		Principal:      "alice",
		Owner:          "instance-a",
		Status:         mcp.TaskWorking,
		CreatedAt:      now,
		UpdatedAt:      now,
		TTLMs:          ttl.Milliseconds(),
		ExpiresAt:      now.Add(ttl),
		LeaseUntil:     now.Add(15 * time.Second),
		PollIntervalMs: 1000,
	}
}

func testTaskCreateGet(t tb, s server.TaskStore) {
	ctx := context.Background()
	r := TaskRecord(time.Minute)
	r.Inputs = []server.TaskInput{{Key: "baton:1", Request: json.RawMessage(`{"method":"roots/list","params":{}}`)}}
	r.Error = &mcp.Error{Code: -32603, Message: "boom", Data: map[string]any{"why": "test"}}
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := s.Create(ctx, r); !errors.Is(err, server.ErrTaskExists) {
		t.Errorf("second Create with the same id: %v, want ErrExists", err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.ID != r.ID || got.Principal != "alice" || got.Owner != "instance-a" || got.Status != mcp.TaskWorking ||
		!got.CreatedAt.Equal(r.CreatedAt) || !got.ExpiresAt.Equal(r.ExpiresAt) || !got.LeaseUntil.Equal(r.LeaseUntil) ||
		got.PollIntervalMs != 1000 || len(got.Inputs) != 1 || got.Inputs[0].Key != "baton:1" ||
		string(got.Inputs[0].Request) != `{"method":"roots/list","params":{}}` || got.Error == nil || got.Error.Code != -32603 {
		t.Errorf("Get returned %+v, want what was created (%+v)", got, r)
	}
	if _, err := s.Get(ctx, "no-such-task"); !errors.Is(err, server.ErrTaskNotFound) {
		t.Errorf("Get of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := s.Update(ctx, "no-such-task", func(*server.TaskRecord) error { return nil }); !errors.Is(err, server.ErrTaskNotFound) {
		t.Errorf("Update of an unknown id: %v, want ErrNotFound", err)
	}
}

// A record handed out, or passed to an update function that then fails,
// is the caller's: changing it changes nothing stored.
func testTaskCopies(t tb, s server.TaskStore) {
	ctx := context.Background()
	r := TaskRecord(time.Minute)
	r.Inputs = []server.TaskInput{{Key: "k", Request: json.RawMessage(`{"method":"roots/list"}`)}}
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("Create: %v", err)
	}
	r.Status = mcp.TaskFailed
	r.Inputs[0].Key = "changed"
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	got.Status = mcp.TaskCancelled
	got.Inputs[0].Request[0] = 'X'
	boom := errors.New("boom")
	if _, err := s.Update(ctx, r.ID, func(rec *server.TaskRecord) error {
		rec.Status = mcp.TaskCompleted
		rec.Inputs[0].Answer = json.RawMessage(`{}`)
		return boom
	}); !errors.Is(err, boom) {
		t.Errorf("Update whose function fails: %v, want its error", err)
	}
	again, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if again.Status != mcp.TaskWorking || again.Inputs[0].Key != "k" || again.Inputs[0].Request[0] != '{' || again.Inputs[0].Answer != nil {
		t.Errorf("stored record changed through a copy or a failed update: %+v", again)
	}
}

func testTaskUpdate(t tb, s server.TaskStore) {
	ctx := context.Background()
	r := TaskRecord(time.Minute)
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("Create: %v", err)
	}
	out, err := s.Update(ctx, r.ID, func(rec *server.TaskRecord) error {
		rec.Status = mcp.TaskCompleted
		rec.Result = json.RawMessage(`{"content":[]}`)
		rec.ID = "hijacked"
		rec.ExpiresAt = rec.ExpiresAt.Add(time.Hour)
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if out.Status != mcp.TaskCompleted || out.ID != r.ID || !out.ExpiresAt.Equal(r.ExpiresAt) {
		t.Errorf("Update returned %+v: want completed, with ID and ExpiresAt unchanged", out)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil || got.Status != mcp.TaskCompleted || string(got.Result) != `{"content":[]}` {
		t.Errorf("after Update, Get = %+v, %v", got, err)
	}
	if _, err := s.Get(ctx, "hijacked"); !errors.Is(err, server.ErrTaskNotFound) {
		t.Errorf("an update function moved the record to another id: %v", err)
	}
	// ErrNoUpdate writes nothing and returns the record as read.
	same, err := s.Update(ctx, r.ID, func(rec *server.TaskRecord) error {
		rec.Status = mcp.TaskFailed
		return server.ErrTaskNoUpdate
	})
	if err != nil || same.Status != mcp.TaskCompleted {
		t.Errorf("Update with ErrNoUpdate = %+v, %v; want the stored record, nil", same, err)
	}
	if got, _ := s.Get(ctx, r.ID); got == nil || got.Status != mcp.TaskCompleted {
		t.Errorf("ErrNoUpdate wrote: %+v", got)
	}
}

// Concurrent updates never lose one another: each increments Keys once.
func testTaskConcurrentUpdates(t tb, s server.TaskStore) {
	ctx := context.Background()
	r := TaskRecord(time.Minute)
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("Create: %v", err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := s.Update(ctx, r.ID, func(rec *server.TaskRecord) error {
				rec.Keys++
				return nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("concurrent Update: %v", err)
		}
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.Keys != n {
		t.Errorf("after %d concurrent increments Keys = %d: updates were lost", n, got.Keys)
	}
}

// A record is gone once it expires.
func testTaskExpiry(t tb, s server.TaskStore) {
	ctx := context.Background()
	r := TaskRecord(150 * time.Millisecond)
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("Get before expiry: %v", err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		_, err := s.Get(ctx, r.ID)
		if errors.Is(err, server.ErrTaskNotFound) {
			break
		}
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the record outlived its expiry by %v", waitLimit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := s.Update(ctx, r.ID, func(*server.TaskRecord) error { return nil }); !errors.Is(err, server.ErrTaskNotFound) {
		t.Errorf("Update after expiry: %v, want ErrNotFound", err)
	}
}

// Signals reach the owner's receiver, and only it.
func testTaskSignals(t tb, s server.TaskStore) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := map[string]chan string{"a": make(chan string, 8), "b": make(chan string, 8)}
	done := make(chan error, 2)
	for owner, ch := range got {
		go func() { done <- s.Signals(ctx, owner, func(id string) { ch <- id }) }()
	}
	// A receiver may take a moment to subscribe: signal until one arrives.
	deadline := time.Now().Add(waitLimit)
	for arrived := false; !arrived; {
		if err := s.Signal(ctx, "a", "task-1"); err != nil {
			t.Fatalf("Signal: %v", err)
		}
		select {
		case id := <-got["a"]:
			if id != "task-1" {
				t.Fatalf("owner a got %q, want task-1", id)
			}
			arrived = true
		case <-time.After(20 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no signal reached owner a")
			}
		}
	}
	select {
	case id := <-got["b"]:
		t.Errorf("owner b got a signal meant for a: %q", id)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Signals after its context ended: %v, want context.Canceled", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("Signals did not return when its context ended")
		}
	}
}
