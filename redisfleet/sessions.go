package redisfleet

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/legacy"
)

// sessionStore is a legacy.Store on Redis, so that the instances
// of a fleet share their 2025-11-25 sessions: a session made on one
// instance is served by any other, and a client's answer to a
// server-to-client request (elicitation, sampling, roots), POSTed to any
// instance, reaches the call waiting for it on the instance that holds it.
//
// Layout, for a prefix P (the fleet's prefix + "sessions:"):
//
//   - P+"{sessions}:s:"+id is a hash: "rec", the session's record as
//     JSON; "owner", the key of its owner's set; "used", when it was last
//     used (Unix milliseconds). It expires (PEXPIRE) after the session's
//     idle time and every use pushes that back, so Redis forgets an idle
//     session by itself: no instance sweeps.
//   - P+"{sessions}:all" is a sorted set of the session ids, each scored
//     with when it goes idle (Unix milliseconds), for the total limit and
//     Count.
//   - P+"{sessions}:owner:"+h, where h is a digest of the owner (a
//     principal or a client address), is the same for one owner's
//     sessions, for its quota; it expires with the owner's last session.
//   - P+"{channels}:to:"+instance is the pub/sub channel of one instance
//     (wake-ups for its calls' kept answers, the takeover of a GET stream
//     it holds, a notification for it); P+"{channels}:all-instances" is
//     the channel every instance listens on (cancellations, deletions,
//     changes of a session).
//   - P+"call:{"+key+"}" is a parked server request and its answer, and
//     P+"ev:{"+session+"}:"+stream the events of a resumable stream (see
//     Park and OpenStream).
//
// Sessions expire by the Redis server's clock, read in the scripts (TIME),
// so the instances' clocks do not matter. Creating a session (the quota
// and total checks and the writes), touching one and deleting one are
// single Lua scripts; updating a record is optimistic (read, change, then
// a script that writes only if the session is still there and its record
// is still the one read), retried when another instance wrote in
// between. The session keys and their indexes
// share the hash tag {sessions}, and the channels {channels}, so the
// store works on Redis Cluster too (one master serves the records);
// parked requests and the events of streams spread over the slots.
//
// It is safe for concurrent use.
type sessionStore struct {
	client redis.UniversalClient
	prefix string
}

// Sessions returns the fleet's legacy.Store, whose keys start with the
// fleet's prefix + "sessions:".
func (f *Fleet) Sessions() legacy.Store {
	return &sessionStore{client: f.client, prefix: f.prefix + "sessions:"}
}

// The session keys and their indexes share the hash tag {sessions}, so
// that the scripts that write a session and its indexes together run on
// Redis Cluster (one slot: one master serves the sessions' records). The
// channels share {channels}: publishing and subscribing go to one node,
// which keeps the messages of both channels in order.
func (s *sessionStore) key(id string) string { return s.prefix + "{sessions}:s:" + id }
func (s *sessionStore) all() string          { return s.prefix + "{sessions}:all" }
func (s *sessionStore) ownerKey(owner string) string {
	sum := sha256.Sum256([]byte(owner))
	return s.prefix + "{sessions}:owner:" + hex.EncodeToString(sum[:16])
}
func (s *sessionStore) channel(instance string) string {
	if instance == "" {
		return s.prefix + "{channels}:all-instances"
	}
	return s.prefix + "{channels}:to:" + instance
}

// createScript: KEYS = session, all, owner set; ARGV = record, id, idle
// ms, total limit, owner limit. Returns {0, now} when created, {1, ms} or
// {2, ms} when the owner's quota or the total refuses it (ms until its
// soonest session goes idle), {3, 0} when the id is taken.
var createScript = redis.NewScript(nowMs + `
local idle = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local perOwner = tonumber(ARGV[5])
if perOwner > 0 and redis.call('ZCARD', KEYS[3]) >= perOwner then
  local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
  return {1, tonumber(first[2]) - now}
end
local total = tonumber(ARGV[4])
if total > 0 and redis.call('ZCARD', KEYS[2]) >= total then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {2, tonumber(first[2]) - now}
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  return {3, 0}
end
redis.call('HSET', KEYS[1], 'rec', ARGV[1], 'owner', KEYS[3], 'used', now)
redis.call('PEXPIRE', KEYS[1], idle)
redis.call('ZADD', KEYS[2], now + idle, ARGV[2])
redis.call('ZADD', KEYS[3], now + idle, ARGV[2])
if redis.call('PTTL', KEYS[3]) < idle then
  redis.call('PEXPIRE', KEYS[3], idle)
end
return {0, now}
`)

// touchScript: KEYS = session, all; ARGV = id, idle ms. Returns {record,
// now}, or nil when the session is gone.
var touchScript = redis.NewScript(nowMs + `
local v = redis.call('HMGET', KEYS[1], 'rec', 'owner')
if not v[1] then
  return false
end
local idle = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'used', now)
redis.call('PEXPIRE', KEYS[1], idle)
redis.call('ZADD', KEYS[2], now + idle, ARGV[1])
if v[2] then
  redis.call('ZADD', v[2], now + idle, ARGV[1])
  if redis.call('PTTL', v[2]) < idle then
    redis.call('PEXPIRE', v[2], idle)
  end
end
return {v[1], now}
`)

// deleteScript: KEYS = session, all; ARGV = id. Returns 1 if it existed.
var deleteScript = redis.NewScript(`
local owner = redis.call('HGET', KEYS[1], 'owner')
local n = redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if owner then
  redis.call('ZREM', owner, ARGV[1])
end
return n
`)

// countScript: KEYS = all. Drops the ids gone idle and counts the rest.
var countScript = redis.NewScript(nowMs + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])
`)

// writeScript: KEYS = session; ARGV = the SHA-1 of the record read, the
// new record, the caller's deadline (Unix ms; 0 for none). Writes the
// record only if the session is still there (an update never brings back
// a session that expired meanwhile), its record is still the one read,
// and the deadline has not passed by Redis's clock (an update the caller
// gave up on writes nothing). Returns 1, 0 when another instance wrote
// first, -1 when the session is gone, -2 when too late.
var writeScript = redis.NewScript(pastDeadline + `
if past(ARGV[3]) then
  return -2
end
local cur = redis.call('HGET', KEYS[1], 'rec')
if not cur then
  return -1
end
if redis.sha1hex(cur) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'rec', ARGV[2])
return 1
`)

func encodeSession(r *legacy.Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("redis sessions: encode session: %w", err)
	}
	return b, nil
}

func decodeSession(b []byte, used int64) (*legacy.Record, error) {
	var r legacy.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("redis sessions: decode session: %w", err)
	}
	r.LastUsed = time.UnixMilli(used)
	return &r, nil
}

// fields are the hash fields Get and Update read, in decodeFields' order.
var fields = []string{"rec", "used"}

// decodeFields decodes the reply to HMGET fields: the record and its
// last use, or legacy.ErrNotFound when the session is gone.
func decodeFields(v []any) (*legacy.Record, error) {
	rec, ok := v[0].(string)
	if !ok {
		return nil, legacy.ErrNotFound
	}
	var used int64
	if u, ok := v[1].(string); ok {
		_, _ = fmt.Sscan(u, &used)
	}
	return decodeSession([]byte(rec), used)
}

// Create implements legacy.Store.
func (s *sessionStore) Create(ctx context.Context, r *legacy.Record, lim legacy.Limits) error {
	b, err := encodeSession(r)
	if err != nil {
		return err
	}
	res, err := createScript.Run(ctx, s.client, []string{s.key(r.ID), s.all(), s.ownerKey(r.Owner)},
		b, r.ID, lim.Idle.Milliseconds(), lim.MaxSessions, lim.MaxPerOwner).Int64Slice()
	if err != nil {
		return fmt.Errorf("redis sessions: create session: %w", err)
	}
	if len(res) != 2 {
		return fmt.Errorf("redis sessions: create session: unexpected reply %v", res)
	}
	retry := time.Duration(res[1]) * time.Millisecond
	switch res[0] {
	case 0:
		return nil
	case 1:
		return &legacy.LimitError{PerOwner: true, Limit: lim.MaxPerOwner, RetryAfter: retry}
	case 2:
		return &legacy.LimitError{Limit: lim.MaxSessions, RetryAfter: retry}
	default:
		return legacy.ErrExists
	}
}

// Get implements legacy.Store.
func (s *sessionStore) Get(ctx context.Context, id string) (*legacy.Record, error) {
	v, err := s.client.HMGet(ctx, s.key(id), fields...).Result()
	if err != nil {
		return nil, fmt.Errorf("redis sessions: get session: %w", err)
	}
	return decodeFields(v)
}

// Touch implements legacy.Store.
func (s *sessionStore) Touch(ctx context.Context, id string, idle time.Duration) (*legacy.Record, error) {
	res, err := touchScript.Run(ctx, s.client, []string{s.key(id), s.all()}, id, idle.Milliseconds()).Slice()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, legacy.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("redis sessions: touch session: %w", err)
	}
	rec, ok1 := res[0].(string)
	used, ok2 := res[1].(int64)
	if len(res) != 2 || !ok1 || !ok2 {
		return nil, fmt.Errorf("redis sessions: touch session: unexpected reply %v", res)
	}
	return decodeSession([]byte(rec), used)
}

// Update implements legacy.Store with an optimistic update in two round
// trips: HMGET, then a script that writes the record only if the session
// is still there and its record still the one read (compared by SHA-1 in
// Redis), and reruns fn on the new record when another instance wrote in
// between. An fn returning legacy.ErrNoUpdate costs the HMGET alone.
func (s *sessionStore) Update(ctx context.Context, id string, fn func(*legacy.Record) error) (*legacy.Record, error) {
	key := s.key(id)
	for range maxRetries {
		v, err := s.client.HMGet(ctx, key, fields...).Result()
		if err != nil {
			return nil, fmt.Errorf("redis sessions: update session: read: %w", err)
		}
		cur, err := decodeFields(v)
		if err != nil {
			return nil, err
		}
		next := cur.Clone()
		if err := fn(next); errors.Is(err, legacy.ErrNoUpdate) {
			return cur, nil
		} else if err != nil {
			return nil, err
		}
		next.ID, next.Owner, next.Principal, next.LastUsed, next.Rev = cur.ID, cur.Owner, cur.Principal, cur.LastUsed, cur.Rev+1
		b, err := encodeSession(next)
		if err != nil {
			return nil, err
		}
		sum := sha1.Sum([]byte(v[0].(string))) // decodeFields checked it is a string
		n, err := writeScript.Run(ctx, s.client, []string{key}, hex.EncodeToString(sum[:]), b, deadlineMs(ctx)).Int64()
		switch {
		case err != nil:
			return nil, fmt.Errorf("redis sessions: update session: %w", err)
		case n == 1:
			return next, nil
		case n == -1:
			return nil, legacy.ErrNotFound
		case n == -2:
			return nil, fmt.Errorf("redis sessions: update session: Redis ran it after the deadline, and wrote nothing: %w", context.DeadlineExceeded)
		}
		// another instance wrote first: rerun on its record
	}
	return nil, fmt.Errorf("redis sessions: update session: lost the race %d times in a row", maxRetries)
}

// Delete implements legacy.Store.
func (s *sessionStore) Delete(ctx context.Context, id string) (bool, error) {
	n, err := deleteScript.Run(ctx, s.client, []string{s.key(id), s.all()}, id).Int64()
	if err != nil {
		return false, fmt.Errorf("redis sessions: delete session: %w", err)
	}
	return n == 1, nil
}

// Count implements legacy.Store.
func (s *sessionStore) Count(ctx context.Context) (int, error) {
	n, err := countScript.Run(ctx, s.client, []string{s.all()}).Int64()
	if err != nil {
		return 0, fmt.Errorf("redis sessions: count sessions: %w", err)
	}
	return int(n), nil
}

// Publish implements legacy.Store with PUBLISH (SPUBLISH on Redis
// Cluster).
func (s *sessionStore) Publish(ctx context.Context, instance string, msg []byte) error {
	if err := publishShard(ctx, s.client, s.channel(instance), msg); err != nil {
		return fmt.Errorf("redis sessions: publish: %w", err)
	}
	return nil
}

// Receive implements legacy.Store with SUBSCRIBE to the instance's channel
// and the one of every instance.
func (s *sessionStore) Receive(ctx context.Context, instance string, deliver func(msg []byte)) error {
	return receiveShard(ctx, s.client, "redis sessions", []string{s.channel(instance), s.channel("")},
		func(payload string) { deliver([]byte(payload)) })
}

var _ legacy.Store = (*sessionStore)(nil)
