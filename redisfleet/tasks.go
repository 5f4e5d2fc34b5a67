package redisfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/tasks"
)

// TaskStore is a tasks.Store on Redis, so that the instances of a
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
//
// Updates are optimistic transactions (WATCH the key, read, compute, MULTI
// SET EXEC), retried when another instance wrote in between, so two
// instances never overwrite each other's change: the one that loses the
// race reruns its update on the record the winner stored. Pub/sub is only
// a wake-up: what was answered or cancelled is in the record, and the
// running instance rereads its tasks periodically, so a lost message delays
// a task, never loses its input.
//
// It is safe for concurrent use.
type TaskStore struct {
	client redis.UniversalClient
	prefix string
}

// Tasks returns the fleet's tasks.Store, whose keys start with the
// fleet's prefix + "tasks:".
func (f *Fleet) Tasks() *TaskStore {
	return &TaskStore{client: f.client, prefix: f.prefix + "tasks:"}
}

func (s *TaskStore) key(id string) string        { return s.prefix + "task:" + id }
func (s *TaskStore) channel(owner string) string { return s.prefix + "wake:" + owner }

func encodeTask(r *tasks.Record) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("redis tasks: encode task: %w", err)
	}
	return b, nil
}

func decodeTask(b []byte) (*tasks.Record, error) {
	var r tasks.Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("redis tasks: decode task: %w", err)
	}
	return &r, nil
}

// expiry is the PXAT of a record: its ExpiresAt, to the millisecond.
func expiry(r *tasks.Record) redis.SetArgs {
	return redis.SetArgs{ExpireAt: r.ExpiresAt.Truncate(time.Millisecond)}
}

// Create implements tasks.Store with SET NX PXAT.
func (s *TaskStore) Create(ctx context.Context, r *tasks.Record) error {
	b, err := encodeTask(r)
	if err != nil {
		return err
	}
	args := expiry(r)
	args.Mode = "NX"
	err = s.client.SetArgs(ctx, s.key(r.ID), b, args).Err()
	switch {
	case errors.Is(err, redis.Nil):
		return tasks.ErrExists
	case err != nil:
		return fmt.Errorf("redis tasks: create task: %w", err)
	}
	return nil
}

// Get implements tasks.Store.
func (s *TaskStore) Get(ctx context.Context, id string) (*tasks.Record, error) {
	b, err := s.client.Get(ctx, s.key(id)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, tasks.ErrNotFound
	case err != nil:
		return nil, fmt.Errorf("redis tasks: get task: %w", err)
	}
	return decodeTask(b)
}

// Update implements tasks.Store with an optimistic transaction.
func (s *TaskStore) Update(ctx context.Context, id string, fn func(*tasks.Record) error) (*tasks.Record, error) {
	key := s.key(id)
	var out *tasks.Record
	txf := func(tx *redis.Tx) error {
		b, err := tx.Get(ctx, key).Bytes()
		if errors.Is(err, redis.Nil) {
			return tasks.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("redis tasks: update task: read: %w", err)
		}
		cur, err := decodeTask(b)
		if err != nil {
			return err
		}
		next := cur.Clone()
		if err := fn(next); errors.Is(err, tasks.ErrNoUpdate) {
			out = cur
			return nil
		} else if err != nil {
			return err
		}
		next.ID, next.ExpiresAt = cur.ID, cur.ExpiresAt
		nb, err := encodeTask(next)
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SetArgs(ctx, key, nb, expiry(next))
			return nil
		})
		if err != nil {
			return err
		}
		out = next
		return nil
	}
	if err := watch(ctx, s.client, key, maxRetries, "redis tasks: update task", txf); err != nil {
		return nil, err
	}
	return out, nil
}

// Signal implements tasks.Store with PUBLISH.
func (s *TaskStore) Signal(ctx context.Context, owner, id string) error {
	if err := s.client.Publish(ctx, s.channel(owner), id).Err(); err != nil {
		return fmt.Errorf("redis tasks: signal: %w", err)
	}
	return nil
}

// Signals implements tasks.Store with SUBSCRIBE.
func (s *TaskStore) Signals(ctx context.Context, owner string, deliver func(id string)) error {
	return receive(ctx, s.client, "redis tasks", []string{s.channel(owner)}, deliver)
}

var _ tasks.Store = (*TaskStore)(nil)
