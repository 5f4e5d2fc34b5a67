package redisfleet

// The fleet's server.URLFlowStore. Keys, under the fleet's prefix + "urlflow:":
// link:ID (the record, JSON, without state), state:ID (pending, claimed or
// done), out:ID (the outcome, JSON), bind:P:B (the newest link of a
// principal and call), pending:P (a sorted set of the principal's pending
// links by expiry, for the quota); all expire. Completions are published
// on the channel done:ID.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/server"
)

// urlFlowStore is a server.URLFlowStore on Redis, so that the link a handler
// minted on one instance is completed by a callback on another and seen
// by a retry (or a parked 2025-11-25 call) on a third. It is safe for
// concurrent use.
type urlFlowStore struct {
	rdb    redis.UniversalClient
	prefix string
	// Poll is how often Wait reads the record again besides listening
	// for the completion (default 2 seconds), in case a message is lost.
	Poll time.Duration
}

// URLFlow returns the fleet's server.URLFlowStore: its keys start with the
// fleet's prefix + "urlflow:".
func (f *Fleet) URLFlow() server.URLFlowStore {
	return &urlFlowStore{rdb: f.client, prefix: f.prefix + "urlflow:", Poll: 2 * time.Second}
}

func principalDigest(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return hex.EncodeToString(sum[:12])
}

var urlCreateScript = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[4])
local max = tonumber(ARGV[3])
if max > 0 and redis.call('ZCARD', KEYS[4]) >= max then return 'quota' end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'dup' end
redis.call('SET', KEYS[2], 'pending', 'PX', ARGV[2])
redis.call('SET', KEYS[3], ARGV[6], 'PX', ARGV[2])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[6])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
return 'ok'
`)

// Create implements server.URLFlowStore.
func (s *urlFlowStore) Create(ctx context.Context, rec server.URLFlowRecord, maxPending int, keep time.Duration) error {
	rec.State, rec.Outcome = "", nil
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("redis urlflow: encode: %w", err)
	}
	p := principalDigest(rec.Principal)
	keys := []string{s.prefix + "link:" + rec.ID, s.prefix + "state:" + rec.ID, s.prefix + "bind:" + p + ":" + rec.Binding, s.prefix + "pending:" + p}
	res, err := urlCreateScript.Run(ctx, s.rdb, keys, b, keep.Milliseconds(), maxPending, time.Now().UnixMilli(), rec.Expires.UnixMilli(), rec.ID).Text()
	switch {
	case err != nil:
		return fmt.Errorf("redis urlflow: create: %w", err)
	case res == "quota":
		return server.ErrURLLinkQuota
	case res == "dup":
		return errors.New("redis urlflow: duplicate link id")
	}
	return nil
}

// Get implements server.URLFlowStore.
func (s *urlFlowStore) Get(ctx context.Context, id string) (server.URLFlowRecord, error) {
	vals, err := s.rdb.MGet(ctx, s.prefix+"link:"+id, s.prefix+"state:"+id, s.prefix+"out:"+id).Result()
	if err != nil {
		return server.URLFlowRecord{}, fmt.Errorf("redis urlflow: get: %w", err)
	}
	link, _ := vals[0].(string)
	state, _ := vals[1].(string)
	if link == "" || state == "" {
		return server.URLFlowRecord{}, server.ErrURLLinkNotFound
	}
	var rec server.URLFlowRecord
	if err := json.Unmarshal([]byte(link), &rec); err != nil {
		return server.URLFlowRecord{}, fmt.Errorf("redis urlflow: decode: %w", err)
	}
	rec.State = state
	if out, _ := vals[2].(string); out != "" && state == server.URLLinkDone {
		rec.Outcome = &server.URLOutcome{}
		if err := json.Unmarshal([]byte(out), rec.Outcome); err != nil {
			return server.URLFlowRecord{}, fmt.Errorf("redis urlflow: decode outcome: %w", err)
		}
	}
	return rec, nil
}

// Lookup implements server.URLFlowStore.
func (s *urlFlowStore) Lookup(ctx context.Context, principal, binding string) (string, error) {
	id, err := s.rdb.Get(ctx, s.prefix+"bind:"+principalDigest(principal)+":"+binding).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", server.ErrURLLinkNotFound
	case err != nil:
		return "", fmt.Errorf("redis urlflow: lookup: %w", err)
	}
	return id, nil
}

var urlClaimScript = redis.NewScript(`
local st = redis.call('GET', KEYS[1])
if not st then return 'gone' end
if st ~= 'pending' then return 'used' end
redis.call('SET', KEYS[1], 'claimed', 'KEEPTTL')
return 'ok'
`)

// Claim implements server.URLFlowStore.
func (s *urlFlowStore) Claim(ctx context.Context, id string) (server.URLFlowRecord, error) {
	res, err := urlClaimScript.Run(ctx, s.rdb, []string{s.prefix + "state:" + id}).Text()
	switch {
	case err != nil:
		return server.URLFlowRecord{}, fmt.Errorf("redis urlflow: claim: %w", err)
	case res == "gone":
		return server.URLFlowRecord{}, server.ErrURLLinkNotFound
	case res == "used":
		return server.URLFlowRecord{}, server.ErrURLLinkUsed
	}
	return s.Get(ctx, id)
}

var urlFinishScript = redis.NewScript(`
local st = redis.call('GET', KEYS[1])
if not st then return 'gone' end
if st ~= 'claimed' then return 'used' end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1 then ttl = 1000 end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[1], 'done', 'KEEPTTL')
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('PUBLISH', KEYS[4], 'done')
return 'ok'
`)

// Finish implements server.URLFlowStore.
func (s *urlFlowStore) Finish(ctx context.Context, id string, out server.URLOutcome) error {
	rec, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return fmt.Errorf("redis urlflow: encode outcome: %w", err)
	}
	keys := []string{s.prefix + "state:" + id, s.prefix + "out:" + id, s.prefix + "pending:" + principalDigest(rec.Principal), s.prefix + "done:" + id}
	res, err := urlFinishScript.Run(ctx, s.rdb, keys, b, id).Text()
	switch {
	case err != nil:
		return fmt.Errorf("redis urlflow: finish: %w", err)
	case res == "gone":
		return server.ErrURLLinkNotFound
	case res == "used":
		return server.ErrURLLinkUsed
	}
	return nil
}

// Wait implements server.URLFlowStore: it listens on the link's channel and
// reads the record again every Poll.
func (s *urlFlowStore) Wait(ctx context.Context, id string) error {
	sub := s.rdb.Subscribe(ctx, s.prefix+"done:"+id)
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil { // the subscription is live from here
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("redis urlflow: subscribe: %w", err)
	}
	ch := sub.Channel()
	poll := s.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, poll)
		rec, err := s.Get(rctx, id)
		cancel()
		switch {
		case errors.Is(err, server.ErrURLLinkNotFound):
			return server.ErrURLLinkNotFound
		case err == nil && rec.State == server.URLLinkDone:
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-t.C:
		}
	}
}
