package redisfleet

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/server"
)

// Ledger is a server.Ledger on Redis, so that a confirmation is redeemable
// once across every instance of a fleet. It records redemptions as Redis keys that expire with the state they
// name (SET NX PXAT: atomic, so two instances racing on the same state see
// exactly one success).
type redisLedger struct {
	client redis.UniversalClient
	prefix string
}

// Ledger returns the fleet's server.Ledger: its keys are the fleet's
// prefix + "redeemed:" + the redeemed id.
func (f *Fleet) Ledger() server.Ledger {
	return &redisLedger{client: f.client, prefix: f.prefix + "redeemed:"}
}

// Redeem implements server.Ledger.
func (l *redisLedger) Redeem(ctx context.Context, id string, expires time.Time) error {
	if !expires.After(time.Now()) {
		// Nothing to remember: the state it names is dead. Keep a short
		// entry anyway so that a racing duplicate still sees it.
		expires = time.Now().Add(time.Second)
	}
	deadline := deadlineMs(ctx)
	n, err := redeemScript.Run(ctx, l.client, []string{l.prefix + id}, expires.UnixMilli(), deadline).Int()
	switch {
	case err != nil:
		return &redisError{err}
	case n == 0:
		return server.ErrAlreadyRedeemed
	case n < 0:
		return &redisError{fmt.Errorf("Redis ran the redemption after the deadline, and recorded nothing: %w", context.DeadlineExceeded)}
	}
	return nil
}

// redeemScript is SET NX PXAT that does nothing once the caller's
// deadline (ARGV[2], Unix ms; 0 for none) has passed by Redis's clock: a
// redemption the caller gave up on (Redis stalled, a paused server runs
// the commands queued for it when it resumes) is not recorded, so the
// client's retry is not refused as a replay. 1: redeemed now, 0: redeemed
// before, -1: too late.
var redeemScript = redis.NewScript(pastDeadline + `
if past(ARGV[2]) then
  return -1
end
if redis.call('SET', KEYS[1], '1', 'NX', 'PXAT', ARGV[1]) then
  return 1
end
return 0
`)

// redisError is a failure to reach or use Redis. Its Internal method marks
// it as the deployment's trouble, which package server keeps from the
// client (its text names hosts and addresses) and logs instead.
type redisError struct{ err error }

func (e *redisError) Error() string  { return "redis ledger: " + e.err.Error() }
func (e *redisError) Unwrap() error  { return e.err }
func (e *redisError) Internal() bool { return true }

var _ server.Ledger = (*redisLedger)(nil)
