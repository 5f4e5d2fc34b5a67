package taskstest

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/tasks"
)

// lossyStore forgets every update: a store that breaks the contract.
type lossyStore struct{ tasks.Store }

func (s lossyStore) Update(ctx context.Context, id string, fn func(*tasks.Record) error) (*tasks.Record, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return r, fn(r) // changes the copy only
}

// Test reports a broken store, naming the check that failed.
func TestTestReportsABrokenStore(t *testing.T) {
	err := Test(func() (tasks.Store, error) { return lossyStore{tasks.NewMemoryStore(nil)}, nil })
	if err == nil {
		t.Fatal("Test passed a store that loses its updates")
	}
	if !strings.Contains(err.Error(), "Update: ") {
		t.Fatalf("Test's error does not name the Update check: %v", err)
	}
}
