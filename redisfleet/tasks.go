package redisfleet

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/server"
)

// taskStore is a server.Store on Redis, so that the instances of a
// fleet share their tasks (the MCP tasks extension): a task created on one
// instance is read with tasks/get on any other, and a tasks/update or
// tasks/cancel received anywhere reaches the instance running the task.
//
// Layout, for a prefix P (the fleet's prefix + "tasks:"):
//
//   - P+"task:"+id is a string holding the task's record as JSON. It
//     expires (PXAT) at the task's ExpiresAt, its creation time plus its
//     time to live, so Redis forgets every task by itself.
//   - P+"wake:"+owner is the pub/sub channel of one instance: a message is
//     the id of one of its tasks that got an answer or a cancellation.
//   - P+"beat:"+owner is the heartbeat of one instance (server.Heartbeats):
//     the Unix milliseconds until which it vouches for its tasks, kept a
//     day past that so that a reader can tell how long it has been silent.
//
// Every operation touches one key, so the store works on Redis Cluster as
// it is (pub/sub messages reach every node's subscribers); the ledger's
// keys are single keys too. A prefix with a hash tag ("{baton}:tasks:")
// puts them all in one slot, which a cluster does not need.
//
// Updates are optimistic: read (GET), compute, then write with a script
// that sets the record only if it is still the one read, retried when
// another instance wrote in between, so two instances never overwrite
// each other's change: the one that loses the race reruns its update on
// the record the winner stored, which the script hands back. The read is
// skipped when the instance holds the record's bytes from its last read
// or write, and an update that must wake the running instance publishes
// the wake-up in its script (UpdateSignal). Pub/sub is only
// a wake-up: what was answered or cancelled is in the record, and the
// running instance rereads its tasks periodically, so a lost message delays
// a task, never loses its input.
//
// It is safe for concurrent use.
type taskStore struct {
	client redis.UniversalClient
	prefix string
	seen   seenRecords // the records last read or written here
}

// Tasks returns the fleet's server.Store, whose keys start with the
// fleet's prefix + "tasks:".
func (f *Fleet) Tasks() server.TaskStore {
	return &taskStore{client: f.client, prefix: f.prefix + "tasks:"}
}

func (s *taskStore) key(id string) string        { return s.prefix + "task:" + id }
func (s *taskStore) channel(owner string) string { return s.prefix + "wake:" + owner }
func (s *taskStore) beat(owner string) string    { return s.prefix + "beat:" + owner }

// beatMemory is how long a heartbeat is kept past its until.
const beatMemory = 24 * time.Hour

// Beat implements server.Heartbeats with SET PXAT.
func (s *taskStore) Beat(ctx context.Context, instance string, until time.Time) error {
	ms := until.UnixMilli()
	err := s.client.SetArgs(ctx, s.beat(instance), strconv.FormatInt(ms, 10), redis.SetArgs{ExpireAt: until.Add(beatMemory)}).Err()
	if err != nil {
		return fmt.Errorf("redis tasks: heartbeat: %w", err)
	}
	return nil
}

// LastBeat implements server.Heartbeats.
func (s *taskStore) LastBeat(ctx context.Context, instance string) (time.Time, error) {
	v, err := s.client.Get(ctx, s.beat(instance)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return time.Time{}, nil
	case err != nil:
		return time.Time{}, fmt.Errorf("redis tasks: read heartbeat: %w", err)
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("redis tasks: read heartbeat: %w", err)
	}
	return time.UnixMilli(ms), nil
}

func encodeTask(r *server.TaskRecord) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("redis tasks: encode task: %w", err)
	}
	return b, nil
}

func decodeTask(b []byte) (*server.TaskRecord, error) {
	var r server.TaskRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("redis tasks: decode task: %w", err)
	}
	return &r, nil
}

// createTaskScript is SET NX PXAT that does nothing once the caller's
// deadline (ARGV[3], Unix ms; 0 for none) has passed by Redis's clock: a
// request refused because Redis stalled (a paused server runs the
// commands queued for it when it resumes) leaves no task behind. It
// returns 1 when set, 0 when the key exists, -1 when too late.
var createTaskScript = redis.NewScript(pastDeadline + `
if past(ARGV[3]) then
  return -1
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PXAT', ARGV[2]) then
  return 1
end
return 0
`)

// Create implements server.Store with SET NX PXAT, in a script that skips
// the write once ctx's deadline has passed (by Redis's clock: keep the
// clocks of the instances and Redis in step, as docs/deployment.md says).
func (s *taskStore) Create(ctx context.Context, r *server.TaskRecord) error {
	b, err := encodeTask(r)
	if err != nil {
		return err
	}
	deadline := deadlineMs(ctx)
	n, err := createTaskScript.Run(ctx, s.client, []string{s.key(r.ID)}, b, r.ExpiresAt.UnixMilli(), deadline).Int()
	switch {
	case err != nil:
		return fmt.Errorf("redis tasks: create task: %w", err)
	case n == 0:
		return server.ErrTaskExists
	case n < 0:
		return fmt.Errorf("redis tasks: create task: Redis ran it after the deadline, and wrote nothing: %w", context.DeadlineExceeded)
	}
	s.seen.put(r.ID, b)
	return nil
}

// Get implements server.Store.
func (s *taskStore) Get(ctx context.Context, id string) (*server.TaskRecord, error) {
	b, err := s.client.Get(ctx, s.key(id)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, server.ErrTaskNotFound
	case err != nil:
		return nil, fmt.Errorf("redis tasks: get task: %w", err)
	}
	s.seen.put(id, b)
	return decodeTask(b)
}

// updateTaskScript is the write of an optimistic update: SET PXAT only
// if the record is still the one read (its SHA-1 is ARGV[1]) and the
// caller's deadline (ARGV[4], Unix ms; 0 for none) has not passed by
// Redis's clock, so an update the caller gave up on writes nothing. Once
// written, it publishes ARGV[6] on the channel ARGV[5] when ARGV[5] is
// not empty (UpdateSignal: the wake-up of the instance running the task,
// in the same round trip). It returns 1 when written, the current record
// when another instance wrote first (so that the retry needs no read of
// its own), -1 when too late, -2 when the task is gone.
var updateTaskScript = redis.NewScript(pastDeadline + `
if past(ARGV[4]) then
  return -1
end
local cur = redis.call('GET', KEYS[1])
if not cur then
  return -2
end
if redis.sha1hex(cur) ~= ARGV[1] then
  return cur
end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
if ARGV[5] ~= '' then
  redis.call('PUBLISH', ARGV[5], ARGV[6])
end
return 1
`)

// Update implements server.Store with an optimistic update: GET, then a
// script that writes only if the record is still the one read (compared
// by SHA-1 in Redis), rerunning fn on the record the script returns when
// another instance wrote in between. When this store read or wrote the
// record last (Get, Create, Update), fn runs on those bytes and the update
// is the script alone, one round trip; the script refuses if they are
// stale and hands back the current record, and fn reruns on it (two round
// trips, as a read and a write). An fn returning server.ErrNoUpdate, or an
// error, on remembered bytes is decided on a fresh read: the GET alone.
func (s *taskStore) Update(ctx context.Context, id string, fn func(*server.TaskRecord) error) (*server.TaskRecord, error) {
	return s.update(ctx, id, fn, false, "")
}

// UpdateSignal is Update that, once it wrote, signals owner about the
// task (Signal), in the same script: one round trip for the write and the
// wake-up. An owner of "" is the record's own (Record.Owner, the instance
// running the task). Package server uses it for tasks/update and
// tasks/cancel, whose answer or cancellation must reach the instance
// running the task. As with Signal, the wake-up is best effort (pub/sub);
// what it announces is in the record it follows.
func (s *taskStore) UpdateSignal(ctx context.Context, id string, fn func(*server.TaskRecord) error, owner string) (*server.TaskRecord, error) {
	return s.update(ctx, id, fn, true, owner)
}

// update is Update, and UpdateSignal when signal is set.
func (s *taskStore) update(ctx context.Context, id string, fn func(*server.TaskRecord) error, signal bool, owner string) (*server.TaskRecord, error) {
	key := s.key(id)
	deadline := deadlineMs(ctx)
	b := s.seen.get(id)
	fresh := false // b was read from Redis just now, not remembered
	for range maxRetries {
		if b == nil {
			var err error
			b, err = s.client.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				s.seen.drop(id)
				return nil, server.ErrTaskNotFound
			}
			if err != nil {
				return nil, fmt.Errorf("redis tasks: update task: read: %w", err)
			}
			s.seen.put(id, b)
			fresh = true
		}
		cur, err := decodeTask(b)
		if err != nil {
			return nil, err
		}
		next := cur.Clone()
		if err := fn(next); err != nil {
			if !fresh {
				b = nil // decide on a fresh read
				continue
			}
			if errors.Is(err, server.ErrTaskNoUpdate) {
				return cur, nil
			}
			return nil, err
		}
		next.ID, next.ExpiresAt = cur.ID, cur.ExpiresAt
		nb, err := encodeTask(next)
		if err != nil {
			return nil, err
		}
		channel, msg := "", ""
		if signal {
			to := owner
			if to == "" {
				to = cur.Owner
			}
			channel, msg = s.channel(to), id
		}
		sum := sha1.Sum(b)
		res, err := updateTaskScript.Run(ctx, s.client, []string{key},
			hex.EncodeToString(sum[:]), nb, next.ExpiresAt.UnixMilli(), deadline, channel, msg).Result()
		if err != nil {
			s.seen.drop(id) // written or not: unknown
			return nil, fmt.Errorf("redis tasks: update task: %w", err)
		}
		switch v := res.(type) {
		case int64:
			switch v {
			case 1:
				s.seen.put(id, nb)
				return next, nil
			case -1:
				return nil, fmt.Errorf("redis tasks: update task: Redis ran it after the deadline, and wrote nothing: %w", context.DeadlineExceeded)
			case -2:
				s.seen.drop(id)
				return nil, server.ErrTaskNotFound
			}
			return nil, fmt.Errorf("redis tasks: update task: the script answered %d", v)
		case string: // another instance wrote first: rerun on its record
			b, fresh = []byte(v), true
			s.seen.put(id, b)
		default:
			return nil, fmt.Errorf("redis tasks: update task: the script answered %T", res)
		}
	}
	return nil, fmt.Errorf("redis tasks: update task: lost the race %d times in a row", maxRetries)
}

// Signal implements server.Store with PUBLISH.
func (s *taskStore) Signal(ctx context.Context, owner, id string) error {
	if err := s.client.Publish(ctx, s.channel(owner), id).Err(); err != nil {
		return fmt.Errorf("redis tasks: signal: %w", err)
	}
	return nil
}

// Signals implements server.Store with SUBSCRIBE.
func (s *taskStore) Signals(ctx context.Context, owner string, deliver func(id string)) error {
	return receive(ctx, s.client, "redis tasks", []string{s.channel(owner)}, deliver)
}

var (
	_ server.TaskStore      = (*taskStore)(nil)
	_ server.TaskHeartbeats = (*taskStore)(nil)
)
