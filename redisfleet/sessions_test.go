package redisfleet_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/storetest"
)

func TestSessionStore(t *testing.T) {
	rs := testredis.Start(t)
	storetest.Sessions(t, func(t *testing.T) legacy.Store {
		return redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions()
	})
}

// Every key the store writes expires: once the sessions have gone idle,
// nothing of them is left in Redis, and an update racing the expiry does
// not bring a session back without a TTL.
func TestNothingOutlivesIdleTime(t *testing.T) {
	rs := testredis.Start(t)
	rdb := rs.Client(t)
	s := redisfleet.New(rdb, redisfleet.Options{Prefix: "leak:"}).Sessions()
	ctx := context.Background()
	const idle = 300 * time.Millisecond
	lim := legacy.Limits{Idle: idle, MaxSessions: 100, MaxPerOwner: 10}
	var ids []string
	for i := range 6 {
		r := storetest.SessionRecord(fmt.Sprintf("address:192.0.2.%d", i%2))
		if err := s.Create(ctx, r, lim); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if _, err := s.Touch(ctx, ids[0], idle); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "leak:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		ttl, err := rdb.PTTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if k != "leak:sessions:{sessions}:all" && (ttl <= 0 || ttl > idle) {
			t.Errorf("key %s has TTL %v, want one within the idle time %v", k, ttl, idle)
		}
	}
	// Updates until well past the idle time: none writes a session back.
	deadline := time.Now().Add(3 * idle)
	for time.Now().Before(deadline) {
		for _, id := range ids {
			_, err := s.Update(ctx, id, func(r *legacy.Record) error { r.LogLevel = "debug"; return nil })
			if err != nil && !errors.Is(err, legacy.ErrNotFound) {
				t.Fatal(err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Errorf("Count = %d, %v; want 0", n, err)
	}
	if keys, err := rdb.Keys(ctx, "leak:*").Result(); err != nil || len(keys) != 0 {
		t.Errorf("keys left after every session went idle: %v, %v", keys, err)
	}
}
