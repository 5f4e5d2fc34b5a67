package redisfleet_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

// stalled returns a client that honours deadlines on a Redis rs can
// pause, and a function that waits until the paused server has resumed
// and run what was queued for it.
func stalled(t *testing.T, rs *testredis.Server) (*redis.Client, func()) {
	opts := rs.Options()
	opts.ContextTimeoutEnabled = true
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	settle := func() {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if err := client.Ping(context.Background()).Err(); err == nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return client, settle
}

// An update whose write reaches a Redis that stalls past the caller's
// deadline writes nothing, though the paused server runs the queued
// script when it resumes: tasks (the write sent at once on the record the
// store remembers, and after a fresh read), sessions, and a kept answer.
func TestWritesPastDeadlineWriteNothing(t *testing.T) {
	rs := testredis.Start(t)
	client, settle := stalled(t, rs)
	ctx := context.Background()
	f := redisfleet.New(client, redisfleet.Options{Prefix: "stall:"})

	t.Run("task, remembered record", func(t *testing.T) {
		s := f.Tasks()
		r := storetest.TaskRecord(time.Minute)
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(ctx, r.ID, func(r *server.TaskRecord) error { r.StatusMessage = "warm"; return nil }); err != nil {
			t.Fatal(err) // loads the script
		}
		rs.Pause()
		uctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := s.Update(uctx, r.ID, func(r *server.TaskRecord) error { r.StatusMessage = "late"; return nil })
		cancel()
		time.Sleep(300 * time.Millisecond)
		rs.Resume()
		if err == nil {
			t.Fatal("Update on a paused Redis succeeded")
		}
		settle()
		got, err := redisfleet.New(client, redisfleet.Options{Prefix: "stall:"}).Tasks().Get(ctx, r.ID)
		if err != nil || got.StatusMessage != "warm" {
			t.Fatalf("the refused Update wrote: %+v, %v", got, err)
		}
	})

	t.Run("task, fresh read", func(t *testing.T) {
		s := f.Tasks()
		r := storetest.TaskRecord(time.Minute)
		if err := s.Create(ctx, r); err != nil {
			t.Fatal(err)
		}
		other := redisfleet.New(client, redisfleet.Options{Prefix: "stall:"}).Tasks() // remembers nothing
		uctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := other.Update(uctx, r.ID, func(r *server.TaskRecord) error {
			rs.Pause() // between the read and the write
			r.StatusMessage = "late"
			return nil
		})
		cancel()
		time.Sleep(300 * time.Millisecond)
		rs.Resume()
		if err == nil {
			t.Fatal("Update on a paused Redis succeeded")
		}
		settle()
		got, err := s.Get(ctx, r.ID)
		if err != nil || got.StatusMessage == "late" {
			t.Fatalf("the refused Update wrote: %+v, %v", got, err)
		}
	})

	t.Run("session", func(t *testing.T) {
		s := f.Sessions()
		r := storetest.SessionRecord("address:192.0.2.1")
		if err := s.Create(ctx, r, legacy.Limits{Idle: time.Minute, MaxSessions: 10, MaxPerOwner: 10}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Update(ctx, r.ID, func(r *legacy.Record) error { r.LogLevel = "debug"; return nil }); err != nil {
			t.Fatal(err) // loads the script
		}
		uctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err := s.Update(uctx, r.ID, func(r *legacy.Record) error {
			rs.Pause()
			r.LogLevel = "error"
			return nil
		})
		cancel()
		time.Sleep(300 * time.Millisecond)
		rs.Resume()
		if err == nil {
			t.Fatal("Update on a paused Redis succeeded")
		}
		settle()
		got, err := s.Get(ctx, r.ID)
		if err != nil || got.LogLevel != "debug" {
			t.Fatalf("the refused Update wrote: %+v, %v", got, err)
		}
	})

	t.Run("answer", func(t *testing.T) {
		s := f.Sessions()
		if err := s.Park(ctx, "sid", "k1", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.Park(ctx, "sid", "k0", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.Answer(ctx, "sid", "k0", []byte(`{}`)); err != nil {
			t.Fatal(err) // loads the script
		}
		rs.Pause()
		actx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := s.Answer(actx, "sid", "k1", []byte(`{"result":{}}`))
		cancel()
		time.Sleep(300 * time.Millisecond)
		rs.Resume()
		if err == nil || errors.Is(err, legacy.ErrNotWaiting) {
			t.Fatalf("Answer on a paused Redis: %v, want a failure", err)
		}
		settle()
		got, err := s.Answers(ctx, []string{"k1"})
		if err != nil || len(got) != 0 {
			t.Fatalf("the refused answer was kept: %q, %v", got, err)
		}
	})
}
