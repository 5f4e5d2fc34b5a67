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
)

// With the append-only file (appendonly yes, as docs/deployment.md asks),
// a redemption survives Redis being killed and restarted: the replay
// after the restart is refused. Without it, the same restart forgets the
// redemption and the replay is accepted: the reason the file is required.
func TestRedeemSurvivesRestart(t *testing.T) {
	for _, tc := range []struct {
		name       string
		appendOnly bool
		want       error
	}{
		{"appendonly yes", true, server.ErrAlreadyRedeemed},
		{"appendonly no", false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := testredis.StartWith(t, testredis.Config{AppendOnly: tc.appendOnly})
			ctx := context.Background()
			client := redis.NewClient(srv.Options())
			defer client.Close()
			l := redisfleet.New(client, redisfleet.Options{Prefix: "test:"}).Ledger()
			exp := time.Now().Add(time.Minute)
			if err := l.Redeem(ctx, "confirmed-transfer", exp); err != nil {
				t.Fatal(err)
			}
			srv.Restart(t) // SIGKILL, then the same server on the same files
			deadline := time.Now().Add(10 * time.Second)
			var err error
			for {
				err = l.Redeem(ctx, "confirmed-transfer", exp)
				if err == nil || errors.Is(err, server.ErrAlreadyRedeemed) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond) // the client reconnects
			}
			if !errors.Is(err, tc.want) && !(tc.want == nil && err == nil) {
				t.Errorf("replay after a restart with %s: %v, want %v", tc.name, err, tc.want)
			}
		})
	}
}
