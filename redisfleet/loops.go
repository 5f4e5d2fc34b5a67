package redisfleet

// The Redis loops the adapters share: a subscription that delivers
// messages until its context ends.

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// receive subscribes to channels and calls deliver with the payload of
// each message, until ctx ends (it returns ctx.Err()) or the connection
// fails. It waits for every subscription to be confirmed first, so a
// failure to reach Redis is reported instead of hanging silently. what
// names the caller in errors ("redis tasks").
func receive(ctx context.Context, client redis.UniversalClient, what string, channels []string, deliver func(payload string)) error {
	return receiveOn(ctx, client.Subscribe(ctx, channels...), what, channels, deliver)
}

// receiveShard is receive on channels that share a hash slot (a hash
// tag): on Redis Cluster (a *redis.ClusterClient) with sharded pub/sub
// (SSUBSCRIBE) on the shard that owns the slot, elsewhere with SUBSCRIBE.
// Publish to them with publishShard.
func receiveShard(ctx context.Context, client redis.UniversalClient, what string, channels []string, deliver func(payload string)) error {
	if _, cluster := client.(*redis.ClusterClient); cluster {
		return receiveOn(ctx, client.SSubscribe(ctx, channels...), what, channels, deliver)
	}
	return receive(ctx, client, what, channels, deliver)
}

// publishShard publishes msg on a channel receiveShard listens to: on
// Redis Cluster with SPUBLISH, to the shard that owns the channel's slot
// (plain PUBLISH goes to any node and reaches the others over the
// cluster bus, in no set order); elsewhere with PUBLISH. Messages
// published one after the other on channels of one slot arrive in that
// order.
func publishShard(ctx context.Context, client redis.UniversalClient, channel string, msg any) error {
	if _, cluster := client.(*redis.ClusterClient); cluster {
		return client.SPublish(ctx, channel, msg).Err()
	}
	return client.Publish(ctx, channel, msg).Err()
}

func receiveOn(ctx context.Context, sub *redis.PubSub, what string, channels []string, deliver func(payload string)) error {
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
