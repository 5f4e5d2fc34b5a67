package redisfleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

func TestRedeemOnce(t *testing.T) {
	srv := testredis.Start(t)
	ctx := context.Background()
	a := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "test:"}).Ledger()
	b := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "test:"}).Ledger() // another instance
	exp := time.Now().Add(time.Minute)
	if err := a.Redeem(ctx, "s1", exp); err != nil {
		t.Fatal(err)
	}
	if err := b.Redeem(ctx, "s1", exp); !errors.Is(err, server.ErrAlreadyRedeemed) {
		t.Fatalf("second redemption on another instance: %v", err)
	}
	if err := b.Redeem(ctx, "s2", exp); err != nil {
		t.Fatal(err)
	}
	ttl, err := srv.Client(t).PTTL(ctx, "test:redeemed:s1").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("the entry must expire with the state: ttl %v, %v", ttl, err)
	}
}

func TestRedeemRace(t *testing.T) {
	srv := testredis.Start(t)
	ctx := context.Background()
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		l := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "race:"}).Ledger()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := l.Redeem(ctx, "same", time.Now().Add(time.Minute))
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, server.ErrAlreadyRedeemed):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d redemptions succeeded, want exactly 1", wins.Load())
	}
}

func TestRedisDown(t *testing.T) {
	srv := testredis.Start(t)
	c := srv.Client(t)
	l := redisfleet.New(c, redisfleet.Options{Prefix: "x:"}).Ledger()
	_ = c.Close()
	err := l.Redeem(context.Background(), "s", time.Now().Add(time.Minute))
	if err == nil || errors.Is(err, server.ErrAlreadyRedeemed) {
		t.Fatalf("a Redis failure must be an error, not a verdict: %v", err)
	}
}
