package redisfleet

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/server"
)

// Ledger is a server.Ledger on Redis, so that a confirmation is redeemable
// once across every instance of a fleet. It records redemptions as Redis keys that expire with the state they
// name (SET NX PXAT: atomic, so two instances racing on the same state see
// exactly one success).
type Ledger struct {
	client redis.UniversalClient
	prefix string
}

// Ledger returns the fleet's server.Ledger: its keys are the fleet's
// prefix + "redeemed:" + the redeemed id.
func (f *Fleet) Ledger() *Ledger {
	return &Ledger{client: f.client, prefix: f.prefix + "redeemed:"}
}

// Redeem implements server.Ledger.
func (l *Ledger) Redeem(ctx context.Context, id string, expires time.Time) error {
	if !expires.After(time.Now()) {
		// Nothing to remember: the state it names is dead. Keep a short
		// entry anyway so that a racing duplicate still sees it.
		expires = time.Now().Add(time.Second)
	}
	ok, err := l.client.SetArgs(ctx, l.prefix+id, "1", redis.SetArgs{Mode: "NX", ExpireAt: expires}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return server.ErrAlreadyRedeemed
	case err != nil:
		return &redisError{err}
	case ok != "OK":
		return server.ErrAlreadyRedeemed
	}
	return nil
}

// redisError is a failure to reach or use Redis. Its Internal method marks
// it as the deployment's trouble, which package server keeps from the
// client (its text names hosts and addresses) and logs instead.
type redisError struct{ err error }

func (e *redisError) Error() string  { return "redis ledger: " + e.err.Error() }
func (e *redisError) Unwrap() error  { return e.err }
func (e *redisError) Internal() bool { return true }

var _ server.Ledger = (*Ledger)(nil)
