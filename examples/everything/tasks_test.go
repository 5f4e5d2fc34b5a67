package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// Two instances of the example share their tasks through Redis (as with
// BATON_REDIS_URL): a task created on one is polled, answered and
// cancelled through the other.
func TestTasksSharedThroughRedis(t *testing.T) {
	rs := testredis.Start(t)
	instance := func() string {
		keys, err := stateKeys(testKey)
		if err != nil {
			t.Fatal(err)
		}
		fleet, err := fleetFromEnv("unix://"+rs.Socket, "")
		if err != nil {
			t.Fatal(err)
		}
		store := fleet.Tasks()
		srv, err := newServerWith(keys, time.Minute, nil, server.TaskOptions{Store: store}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(func() { ts.Close(); srv.Close() })
		return ts.URL
	}
	a, b := instance(), instance()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// Each request goes to the other instance: the task is created on a,
	// polled and answered through b, a, b, ...
	c, err := mcptest.New(mcptest.RoundRobin(mcptest.URL(a+"/mcp", nil), mcptest.URL(b+"/mcp", nil)), &mcptest.Options{
		Tasks: true, PollInterval: 20 * time.Millisecond,
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"confirm": true})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	task, err := c.StartTask(ctx, "confirm_delete", map[string]any{"filename": "notes.txt"})
	if err != nil {
		t.Fatalf("confirm_delete with the extension: %v, want a task", err)
	}
	res, err := task.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Text(), "Deleted notes.txt") {
		t.Errorf("task result %q, want Deleted notes.txt", res.Text())
	}

	task, err = c.StartTask(ctx, "slow_compute", map[string]any{"seconds": 60, "label": "long"})
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Cancel(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := task.Wait(ctx); !errors.Is(err, mcptest.ErrTaskCancelled) {
		t.Fatalf("after tasks/cancel on the other instance: %v, want cancelled", err)
	}
}
