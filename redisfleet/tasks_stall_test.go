package redisfleet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

// A Create refused because Redis stalled past the caller's deadline
// writes nothing, even though the paused server runs the queued command
// when it resumes; a Create in time stores the task.
func TestCreatePastDeadlineWritesNothing(t *testing.T) {
	rs := testredis.Start(t)
	opts := rs.Options()
	opts.ContextTimeoutEnabled = true
	client := redis.NewClient(opts)
	defer client.Close()
	s := redisfleet.New(client, redisfleet.Options{Prefix: "stall:"}).Tasks()
	ctx := context.Background()
	if err := s.Create(ctx, storetest.TaskRecord(time.Minute)); err != nil { // loads the script
		t.Fatal(err)
	}
	r := storetest.TaskRecord(time.Minute)
	rs.Pause()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := s.Create(cctx, r)
	cancel()
	time.Sleep(300 * time.Millisecond) // Redis's clock passes the deadline too
	rs.Resume()
	if err == nil {
		t.Fatal("Create on a paused Redis succeeded")
	}
	// The command reached Redis before the pause ended; give it time to run.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := client.Ping(ctx).Err(); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, server.ErrTaskNotFound) {
		t.Errorf("the refused Create left a task behind: Get = %v, want ErrNotFound", err)
	}
}
