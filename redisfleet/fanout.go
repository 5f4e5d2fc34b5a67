package redisfleet

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/server"
)

// Fanout is a server.Fanout on Redis pub/sub: a tool, prompt or resource
// change made on one instance reaches the subscriptions/listen streams (and
// legacy GET streams) open on every instance. It publishes and receives
// changes on one Redis channel.
//
// Pub/sub is fire-and-forget: an instance that is disconnected when a
// change is published misses it. List-changed notifications are hints that
// a client re-lists, so a missed one costs freshness, not correctness.
type redisFanout struct {
	client  redis.UniversalClient
	channel string
	origin  string // this instance, to drop its own messages
}

// Fanout returns the fleet's server.Fanout, on the channel named the
// fleet's prefix + "changes". Each call returns a new instance's fan-out:
// call it once per server.
func (f *Fleet) Fanout() server.Fanout {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // crypto/rand never fails
	return &redisFanout{client: f.client, channel: f.prefix + "changes", origin: base64.RawURLEncoding.EncodeToString(b)}
}

// Publish implements server.Fanout: the message goes out behind this
// instance's origin and a space.
func (f *redisFanout) Publish(ctx context.Context, msg []byte) error {
	b := make([]byte, 0, len(f.origin)+1+len(msg))
	b = append(append(append(b, f.origin...), ' '), msg...)
	if err := publishShard(ctx, f.client, f.channel, b); err != nil {
		return fmt.Errorf("redis fan-out: publish: %w", err)
	}
	return nil
}

// Receive implements server.Fanout.
func (f *redisFanout) Receive(ctx context.Context, deliver func(msg []byte)) error {
	return receiveShard(ctx, f.client, "redis fan-out", []string{f.channel}, func(payload string) {
		origin, msg, ok := strings.Cut(payload, " ")
		if !ok || origin == f.origin {
			return // malformed, or our own
		}
		deliver([]byte(msg))
	})
}

var _ server.Fanout = (*redisFanout)(nil)
