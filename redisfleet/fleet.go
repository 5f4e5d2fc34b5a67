// Package redisfleet holds the Redis-backed parts a fleet of instances
// shares, all on one Redis client and one key prefix:
//
//   - Ledger, a server.Ledger: a confirmation is redeemable once across the
//     fleet (server.Call.Redeem);
//   - Fanout, a server.Fanout: a list change made on one instance reaches
//     the listeners of every instance;
//   - Tasks, a server.TaskStore: the fleet shares its tasks;
//   - Sessions, a legacy.Store (and legacy.EventStore): the fleet shares
//     its 2025-11-25 sessions and their streams' events;
//   - URLFlow, a server.URLFlowStore: a URL elicitation's link minted on
//     one instance completes through a callback on any other.
//
// Make one Fleet per process and take from it what the server uses:
//
//	rdb := redis.NewClient(opts)
//	f := redisfleet.New(rdb, redisfleet.Options{Prefix: "baton:"})
//	srv, err := server.New(info, &server.Options{
//		Fanout: f.Fanout(),
//		Tasks:  server.TaskOptions{Store: f.Tasks()},
//		Legacy: legacy.New(&legacy.Options{Store: f.Sessions()}),
//	})
//	// and req.Redeem(ctx, f.Ledger()) in a handler
//
// It lives in its own package so that the core packages do not depend on
// the Redis client. The client is a redis.UniversalClient: one Redis
// server (with replicas or Sentinel if you like), or Redis Cluster for the
// session store and the fan-out (their keys are hash-tagged so that each
// operation's keys share a slot, and their messages use sharded pub/sub
// there).
package redisfleet

import "github.com/redis/go-redis/v9"

// maxRetries bounds the optimistic retries of one update: a record is
// written by its owner, its client and (once a task's lease lapsed) its
// readers, so losing this many races in a row means something is wrong.
const maxRetries = 32

// Options configure a Fleet.
type Options struct {
	// Prefix starts every key and channel the fleet's parts use ("baton:"
	// when empty): the ledger's under Prefix+"redeemed:",
	// the fan-out's channel Prefix+"changes", the tasks' under
	// Prefix+"tasks:" and the sessions' under Prefix+"sessions:". Every
	// instance of a deployment uses the same prefix; deployments sharing a
	// Redis use different ones.
	Prefix string
}

// Fleet makes the Redis-backed parts of a fleet, on one client and one
// key prefix.
type Fleet struct {
	client redis.UniversalClient
	prefix string
}

// New returns a Fleet on client. The client is shared by every part; close
// it when the server is done.
func New(client redis.UniversalClient, opts Options) *Fleet {
	prefix := opts.Prefix
	if prefix == "" {
		prefix = "baton:"
	}
	return &Fleet{client: client, prefix: prefix}
}
