package redisfleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
)

// A redemption the caller gave up on because Redis stalled past its
// deadline is not recorded when the paused server runs it on resuming:
// the client's retry is then redeemed, not refused as a replay.
func TestRedeemPastDeadlineRecordsNothing(t *testing.T) {
	srv := testredis.Start(t)
	opts := srv.Options()
	opts.ContextTimeoutEnabled = true
	client := redis.NewClient(opts)
	defer client.Close()
	l := redisfleet.New(client, redisfleet.Options{Prefix: "stall:"}).Ledger()
	ctx := context.Background()
	exp := time.Now().Add(time.Minute)
	if err := l.Redeem(ctx, "warm-up", exp); err != nil { // loads the script
		t.Fatal(err)
	}
	srv.Pause()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := l.Redeem(cctx, "stalled", exp)
	cancel()
	time.Sleep(300 * time.Millisecond) // Redis's clock passes the deadline too
	srv.Resume()
	if err == nil {
		t.Fatal("Redeem on a paused Redis succeeded")
	}
	deadline := time.Now().Add(5 * time.Second)
	for client.Ping(ctx).Err() != nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	if err := l.Redeem(ctx, "stalled", exp); err != nil {
		t.Errorf("the retry of a redemption refused in the stall: %v, want it redeemed", err)
	}
}
