package redisfleet

// The Redis loops the adapters share: a subscription that delivers
// messages until its context ends, and an optimistic transaction retried
// when another client wrote first.

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// receive subscribes to channels and calls deliver with the payload of
// each message, until ctx ends (it returns ctx.Err()) or the connection
// fails. It waits for every subscription to be confirmed first, so a
// failure to reach Redis is reported instead of hanging silently. what
// names the caller in errors ("redis tasks").
func receive(ctx context.Context, client redis.UniversalClient, what string, channels []string, deliver func(payload string)) error {
	sub := client.Subscribe(ctx, channels...)
	defer sub.Close()
	// A blocked receive does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
	defer stop()
	for range channels { // one confirmation per channel
		if _, err := sub.Receive(ctx); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: subscribe: %w", what, err)
		}
	}
	for {
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%s: receive: %w", what, err)
		}
		deliver(msg.Payload)
	}
}

// watch runs txf in an optimistic transaction watching key, and runs it
// again when another client wrote key first, at most retries times in a
// row; then it gives up with an error that says so. what names the
// operation in that error ("redis tasks: update task"). txf's own error
// is returned as it is.
func watch(ctx context.Context, client redis.UniversalClient, key string, retries int, what string, txf func(*redis.Tx) error) error {
	for range retries {
		err := client.Watch(ctx, txf, key)
		if !errors.Is(err, redis.TxFailedErr) {
			return err
		}
		// another client wrote first: rerun on its record
	}
	return fmt.Errorf("%s: lost the race %d times in a row", what, retries)
}
