package redisfleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/legacy"
)

// callKey is the hash of one parked server request: "s", the session
// whose call waits; "a", the client's answer once it came. It expires
// with the park's ttl. Every operation on it names this one key, so it
// works on Redis Cluster.
func (s *sessionStore) callKey(key string) string { return s.prefix + "call:{" + key + "}" }

// parkScript: KEYS = call; ARGV = session, ttl ms.
var parkScript = redis.NewScript(`
redis.call('HSET', KEYS[1], 's', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// answerScript: KEYS = call; ARGV = session, answer, the caller's
// deadline (Unix ms; 0 for none). Returns 1 when kept, 0 when no call of
// the session waits for it or it was answered, -1 when the deadline has
// passed by Redis's clock (nothing kept: the answer was refused).
var answerScript = redis.NewScript(pastDeadline + `
if past(ARGV[3]) then
  return -1
end
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then
  return 0
end
return redis.call('HSETNX', KEYS[1], 'a', ARGV[2])
`)

// Park implements legacy.Store.
func (s *sessionStore) Park(ctx context.Context, sid, key string, ttl time.Duration) error {
	if err := parkScript.Run(ctx, s.client, []string{s.callKey(key)}, sid, max(ttl.Milliseconds(), 1)).Err(); err != nil {
		return fmt.Errorf("redis sessions: park a request: %w", err)
	}
	return nil
}

// answerProbeBytes is the size from which Answer first checks that a
// call waits for the answer, in a round trip of its own, before sending
// the answer to Redis: a big answer nobody waits for then costs one small
// read and its body never goes to Redis. A smaller one goes straight to
// the script, which checks the same thing and writes nothing when no call
// waits: one round trip.
const answerProbeBytes = 8 << 10

// Answer implements legacy.Store: one round trip (a script that keeps the
// answer only if a call of the session waits for it), two for an answer
// of answerProbeBytes or more.
func (s *sessionStore) Answer(ctx context.Context, sid, key string, answer []byte) error {
	return s.answer(ctx, sid, key, answer, answerScript)
}

// answer runs script (answerScript or answerWakeScript, with its extra
// arguments) to keep an answer, after the probe for a big one.
func (s *sessionStore) answer(ctx context.Context, sid, key string, answer []byte, script *redis.Script, extra ...any) error {
	k := s.callKey(key)
	if len(answer) >= answerProbeBytes {
		owner, err := s.client.HGet(ctx, k, "s").Result()
		switch {
		case errors.Is(err, redis.Nil):
			return legacy.ErrNotWaiting
		case err != nil:
			return fmt.Errorf("redis sessions: read a parked request: %w", err)
		case owner != sid:
			return legacy.ErrNotWaiting
		}
	}
	n, err := script.Run(ctx, s.client, []string{k}, append([]any{sid, answer, deadlineMs(ctx)}, extra...)...).Int64()
	switch {
	case err != nil:
		return fmt.Errorf("redis sessions: keep an answer: %w", err)
	case n < 0:
		return fmt.Errorf("redis sessions: keep an answer: Redis ran it after the deadline, and kept nothing: %w", context.DeadlineExceeded)
	case n != 1:
		return legacy.ErrNotWaiting
	}
	return nil
}

// answerWakeScript is answerScript that, once the answer is kept,
// publishes ARGV[5] on the channel ARGV[4]: the wake-up of the instance
// holding the call. Only on one Redis server: on Redis Cluster the
// instances listen on sharded channels, which a script on another slot
// cannot publish to.
var answerWakeScript = redis.NewScript(pastDeadline + `
if past(ARGV[3]) then
  return -1
end
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then
  return 0
end
local n = redis.call('HSETNX', KEYS[1], 'a', ARGV[2])
if n == 1 then
  redis.call('PUBLISH', ARGV[4], ARGV[5])
end
return n
`)

// AnswerWake is Answer, then Publish of wake to instance once the answer
// is kept; package legacy uses it for an answer to a call on another
// instance. On one Redis server it is one script, one round trip (two for
// an answer of 8 KiB or more, which is probed first as Answer does); on
// Redis Cluster it is Answer then Publish. A failure to publish is not
// reported (the holder reads its calls' answers every second anyway).
func (s *sessionStore) AnswerWake(ctx context.Context, sid, key string, answer []byte, instance string, wake []byte) error {
	if _, cluster := s.client.(*redis.ClusterClient); cluster {
		if err := s.Answer(ctx, sid, key, answer); err != nil {
			return err
		}
		_ = s.Publish(ctx, instance, wake)
		return nil
	}
	return s.answer(ctx, sid, key, answer, answerWakeScript, s.channel(instance), wake)
}

// Answers implements legacy.Store with one pipeline of HGETs (split by
// node on Redis Cluster).
func (s *sessionStore) Answers(ctx context.Context, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte)
	if len(keys) == 0 {
		return out, nil
	}
	cmds := make([]*redis.StringCmd, len(keys))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGet(ctx, s.callKey(k), "a")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("redis sessions: read answers: %w", err)
	}
	for i, c := range cmds {
		if v, err := c.Bytes(); err == nil {
			out[keys[i]] = v
		}
	}
	return out, nil
}

// Unpark implements legacy.Store; one DEL per key, so that no command
// spans slots on Redis Cluster.
func (s *sessionStore) Unpark(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Del(ctx, s.callKey(k))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis sessions: unpark requests: %w", err)
	}
	return nil
}

// takenTTL is how long a parked request stays after its answer was taken
// (TakeAnswers): long enough for the holder to read the answer again if
// the reply of the take was lost, while answers for it are refused
// (answered already).
const takenTTL = 30 * time.Second

// takeAnswerScript: KEYS = call; ARGV = takenTTL in ms. Returns the kept
// answer, shortening the park to ARGV[1] from now (never lengthening it),
// or nil when none was kept (the park left as it is).
var takeAnswerScript = redis.NewScript(`
local a = redis.call('HGET', KEYS[1], 'a')
if a then
  local left = redis.call('PTTL', KEYS[1])
  if left < 0 or left > tonumber(ARGV[1]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[1])
  end
end
return a
`)

// TakeAnswers is Answers that also lets go of the requests whose answers
// it returns, in the same step: one pipeline of scripts (split by node on
// Redis Cluster), one round trip. A request taken stays parked (answered,
// so further answers are refused) for takenTTL, not until its park's ttl,
// so the holder needs no Unpark for it; until then a later TakeAnswers
// returns the answer again, so a take whose reply was lost loses no
// answer. Package legacy uses it when the store has it.
func (s *sessionStore) TakeAnswers(ctx context.Context, keys []string) (map[string][]byte, error) {
	out := make(map[string][]byte)
	if len(keys) == 0 {
		return out, nil
	}
	ttl := takenTTL.Milliseconds()
	cmds := make([]*redis.Cmd, len(keys))
	_, err := s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = takeAnswerScript.EvalSha(ctx, p, []string{s.callKey(k)}, ttl)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return nil, fmt.Errorf("redis sessions: take answers: %w", err)
	}
	for i, c := range cmds {
		if redis.HasErrorPrefix(c.Err(), "NOSCRIPT") { // a fresh Redis: loads it
			c = takeAnswerScript.Run(ctx, s.client, []string{s.callKey(keys[i])}, ttl)
		}
		switch v, err := c.Text(); {
		case err == nil:
			out[keys[i]] = []byte(v)
		case !errors.Is(err, redis.Nil):
			return nil, fmt.Errorf("redis sessions: take answers: %w", err)
		}
	}
	return out, nil
}

// waitKey is the hash of one call of a session that waits for its
// client as a record (package legacy parks it): "c", the record; "r",
// the instance running it ("" for none). Every operation names this one
// key, so it works on Redis Cluster.
func (s *sessionStore) waitKey(sid, key string) string {
	return s.prefix + "wait:{" + sid + "}:" + key
}

// saveCallScript: KEYS = wait; ARGV = record, runner, ttl ms.
var saveCallScript = redis.NewScript(`
redis.call('HSET', KEYS[1], 'c', ARGV[1], 'r', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`)

// claimCallScript: KEYS = wait; ARGV = from, to. Returns 1 when the
// runner was from and is now to, 0 otherwise (or with no record).
var claimCallScript = redis.NewScript(`
local r = redis.call('HGET', KEYS[1], 'r')
if not r or r ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'r', ARGV[2])
return 1
`)

// SaveCall keeps the record of a waiting call (package legacy's record
// of a call of a 2025-11-25 session that waits for its client's answer):
// one script, one round trip.
func (s *sessionStore) SaveCall(ctx context.Context, sid, key string, call []byte, runner string, ttl time.Duration) error {
	if err := saveCallScript.Run(ctx, s.client, []string{s.waitKey(sid, key)}, call, runner, max(ttl.Milliseconds(), 1)).Err(); err != nil {
		return fmt.Errorf("redis sessions: save a waiting call: %w", err)
	}
	return nil
}

// LoadCall returns a waiting call's record and the instance running it,
// or legacy.ErrNotFound.
func (s *sessionStore) LoadCall(ctx context.Context, sid, key string) ([]byte, string, error) {
	v, err := s.client.HMGet(ctx, s.waitKey(sid, key), "c", "r").Result()
	if err != nil {
		return nil, "", fmt.Errorf("redis sessions: load a waiting call: %w", err)
	}
	c, ok := v[0].(string)
	if !ok {
		return nil, "", legacy.ErrNotFound
	}
	r, _ := v[1].(string)
	return []byte(c), r, nil
}

// ClaimCall sets the runner of a waiting call to to if it is from, in one
// script; legacy.ErrNotWaiting when it is not (another instance was
// first) or the record is gone.
func (s *sessionStore) ClaimCall(ctx context.Context, sid, key, from, to string) error {
	n, err := claimCallScript.Run(ctx, s.client, []string{s.waitKey(sid, key)}, from, to).Int64()
	if err != nil {
		return fmt.Errorf("redis sessions: claim a waiting call: %w", err)
	}
	if n != 1 {
		return legacy.ErrNotWaiting
	}
	return nil
}

// DropCall deletes a waiting call's record.
func (s *sessionStore) DropCall(ctx context.Context, sid, key string) error {
	if err := s.client.Del(ctx, s.waitKey(sid, key)).Err(); err != nil {
		return fmt.Errorf("redis sessions: drop a waiting call: %w", err)
	}
	return nil
}
