package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/server"
)

// lossyStore forgets every update: a store that breaks the contract.
type lossyStore struct{ server.TaskStore }

func (s lossyStore) Update(ctx context.Context, id string, fn func(*server.TaskRecord) error) (*server.TaskRecord, error) {
	r, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	return r, fn(r) // changes the copy only
}

// Test reports a broken store, naming the check that failed.
func TestTestReportsABrokenStore(t *testing.T) {
	err := CheckTasks(func() (server.TaskStore, error) { return lossyStore{server.NewMemoryTaskStore(nil)}, nil })
	if err == nil {
		t.Fatal("Test passed a store that loses its updates")
	}
	if !strings.Contains(err.Error(), "Update: ") {
		t.Fatalf("Test's error does not name the Update check: %v", err)
	}
}
