package redisfleet_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

// Two instances update one task in turn and at once: each remembers the
// record it wrote last, which the other's writes make stale; no update is
// lost, and a decision to write nothing is taken on the current record,
// not on a remembered one.
func TestRememberedRecordsLoseNoUpdate(t *testing.T) {
	rs := testredis.Start(t)
	ctx := context.Background()
	a := redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "seen:"}).Tasks().(*redisfleet.TaskStore)
	b := redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "seen:"}).Tasks().(*redisfleet.TaskStore)
	r := storetest.TaskRecord(time.Minute)
	if err := a.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	appendMark := func(s *redisfleet.TaskStore, mark string) {
		t.Helper()
		if _, err := s.Update(ctx, r.ID, func(r *server.TaskRecord) error {
			r.StatusMessage += mark
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	want := ""
	for range 5 { // in turn: each update finds the other's record
		appendMark(a, "a")
		appendMark(b, "b")
		want += "ab"
	}
	// At once: 24 writers, one update each. A writer loses a race only to
	// another's write (or once to its own stale remembered record), so it
	// loses at most 24 times, within the store's 32 retries; with more
	// writers than that the test could fail on a busy machine without a bug.
	const writers = 24
	var wg sync.WaitGroup
	for i := range writers {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Update(ctx, r.ID, func(r *server.TaskRecord) error {
				r.StatusMessage += "x"
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := a.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if wantAll := want + strings.Repeat("x", writers); got.StatusMessage != wantAll {
		t.Fatalf("StatusMessage = %q, want %q then %d x", got.StatusMessage, want, writers)
	}

	// a remembers a working task; b cancels it; a's "only if not
	// terminal" update must see the cancellation.
	appendMark(a, "")
	if _, err := b.Update(ctx, r.ID, func(r *server.TaskRecord) error {
		r.Status = mcp.TaskCancelled
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wrote := false
	rec, err := a.Update(ctx, r.ID, func(r *server.TaskRecord) error {
		if r.Status.Terminal() {
			return server.ErrTaskNoUpdate
		}
		wrote = true
		r.StatusMessage = "overwritten"
		return nil
	})
	if err != nil || rec.Status != mcp.TaskCancelled || rec.StatusMessage == "overwritten" {
		t.Fatalf("Update after another instance's cancel = %+v, %v", rec, err)
	}
	if wrote {
		t.Log("fn ran on the remembered record first, as it may")
	}
	// An error of fn on a remembered record is decided on a fresh one too.
	boom := errors.New("boom")
	if _, err := a.Update(ctx, r.ID, func(r *server.TaskRecord) error {
		if r.Status != mcp.TaskCancelled {
			return boom
		}
		return server.ErrTaskNoUpdate
	}); err != nil {
		t.Fatalf("Update = %v, want the decision of the current record", err)
	}
}
