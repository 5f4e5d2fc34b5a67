package server_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

func TestMemoryStore(t *testing.T) {
	storetest.Tasks(t, func(*testing.T) server.TaskStore { return server.NewMemoryTaskStore(nil) })
}

// The memory store tells expiry by the clock it is given, and sweeps
// expired records out.
func TestMemoryStoreClock(t *testing.T) {
	now := time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC)
	s := server.NewMemoryTaskStore(func() time.Time { return now })
	ctx := context.Background()
	r := storetest.TaskRecord(time.Minute)
	r.CreatedAt, r.ExpiresAt = now, now.Add(time.Minute)
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Minute - time.Millisecond)
	if _, err := s.Get(ctx, r.ID); err != nil {
		t.Fatalf("a millisecond before expiry: %v", err)
	}
	now = now.Add(time.Millisecond)
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, server.ErrTaskNotFound) {
		t.Fatalf("at expiry: %v, want ErrNotFound", err)
	}
	// An expired id may be created again (its record is gone).
	r.CreatedAt, r.ExpiresAt = now, now.Add(time.Minute)
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("Create over an expired record: %v", err)
	}
}

func TestStatus(t *testing.T) {
	for _, c := range []struct {
		s               mcp.TaskStatus
		valid, terminal bool
	}{
		{mcp.TaskWorking, true, false},
		{mcp.TaskInputRequired, true, false},
		{mcp.TaskCompleted, true, true},
		{mcp.TaskFailed, true, true},
		{mcp.TaskCancelled, true, true},
		{"done", false, false},
		{"", false, false},
	} {
		if c.s.Valid() != c.valid || c.s.Terminal() != c.terminal {
			t.Errorf("%q: Valid %v Terminal %v, want %v %v", c.s, c.s.Valid(), c.s.Terminal(), c.valid, c.terminal)
		}
	}
}

func TestPendingAndClone(t *testing.T) {
	r := &server.TaskRecord{Inputs: []server.TaskInput{
		{Key: "a", Request: []byte(`{}`)},
		{Key: "b", Request: []byte(`{}`), Answer: []byte(`{"action":"cancel"}`)},
		{Key: "c", Request: []byte(`{}`)},
	}}
	p := server.PendingInputs(r)
	if len(p) != 2 || p[0].Key != "a" || p[1].Key != "c" {
		t.Errorf("Pending = %+v, want a and c", p)
	}
	c := r.Clone()
	c.Inputs[1].Answer[2] = 'X'
	c.Inputs[0].Key = "z"
	if r.Inputs[1].Answer[2] != 'a' || r.Inputs[0].Key != "a" {
		t.Error("Clone shares memory with the original")
	}
	if (*server.TaskRecord)(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
}
