package redisfleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/legacy"
)

// The events of resumable streams (legacy.EventStore):
//
//   - P+"ev:{"+session+"}:"+stream is a Redis stream: its first entry
//     ("meta") is the stream's meta; the others are its events ("m") and
//     its end ("end"). Positions are the entry ids. It keeps the latest
//     1000 entries (approximately) and expires DefaultEventTTL after its
//     last write.
//   - P+"alive:"+instance exists while the instance beats.
//
// Each operation names one key, so it works on Redis Cluster.

// EventTTL is how long a stream's events are kept after its last write.
var eventTTL = legacy.DefaultEventTTL

func (s *sessionStore) eventsKey(sid, stream string) string {
	return s.prefix + "ev:{" + sid + "}:" + stream
}

func (s *sessionStore) aliveKey(instance string) string { return s.prefix + "alive:" + instance }

// OpenStream implements legacy.EventStore.
func (s *sessionStore) OpenStream(ctx context.Context, sid, stream string, meta legacy.StreamMeta) error {
	b, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("redis sessions: encode stream meta: %w", err)
	}
	k := s.eventsKey(sid, stream)
	_, err = s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []any{"meta", b}})
		p.PExpire(ctx, k, eventTTL)
		return nil
	})
	if err != nil {
		return fmt.Errorf("redis sessions: open a stream: %w", err)
	}
	return nil
}

// appendEntry adds one entry to a stream that exists; legacy.ErrNotFound
// when it is gone.
var appendScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', '1000', '*', ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id
`)

func (s *sessionStore) appendEntry(ctx context.Context, sid, stream, field string, v []byte) (string, error) {
	id, err := appendScript.Run(ctx, s.client, []string{s.eventsKey(sid, stream)}, field, v, eventTTL.Milliseconds()).Text()
	switch {
	case errors.Is(err, redis.Nil):
		return "", legacy.ErrNotFound
	case err != nil:
		return "", fmt.Errorf("redis sessions: keep an event: %w", err)
	}
	return id, nil
}

// Append implements legacy.EventStore.
func (s *sessionStore) Append(ctx context.Context, sid, stream string, msg []byte) (string, error) {
	return s.appendEntry(ctx, sid, stream, "m", msg)
}

// EndStream implements legacy.EventStore: the stream is kept
// legacy.EndedEventTTL more.
func (s *sessionStore) EndStream(ctx context.Context, sid, stream string) error {
	_, err := endScript.Run(ctx, s.client, []string{s.eventsKey(sid, stream)}, legacy.EndedEventTTL.Milliseconds()).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return legacy.ErrNotFound
	case err != nil:
		return fmt.Errorf("redis sessions: end a stream: %w", err)
	}
	return nil
}

// endScript: KEYS = stream; ARGV = ttl ms. Adds the end entry to a stream
// that exists and shortens its life.
var endScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
redis.call('XADD', KEYS[1], '*', 'end', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

// StreamMeta implements legacy.EventStore.
func (s *sessionStore) StreamMeta(ctx context.Context, sid, stream string) (*legacy.StreamMeta, error) {
	msgs, err := s.client.XRangeN(ctx, s.eventsKey(sid, stream), "-", "+", 1).Result()
	if err != nil {
		return nil, fmt.Errorf("redis sessions: read a stream: %w", err)
	}
	if len(msgs) == 0 {
		return nil, legacy.ErrNotFound
	}
	v, ok := msgs[0].Values["meta"].(string)
	if !ok {
		return nil, legacy.ErrNotFound // trimmed past its meta: too old to resume
	}
	var m legacy.StreamMeta
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		return nil, fmt.Errorf("redis sessions: decode stream meta: %w", err)
	}
	return &m, nil
}

// Read implements legacy.EventStore with XRANGE, and XREAD BLOCK to wait.
func (s *sessionStore) Read(ctx context.Context, sid, stream, after string, wait time.Duration) ([]legacy.Event, bool, error) {
	k := s.eventsKey(sid, stream)
	start := "-"
	if after != "" {
		start = "(" + after
	}
	msgs, err := s.client.XRangeN(ctx, k, start, "+", 500).Result()
	if err != nil {
		return nil, false, fmt.Errorf("redis sessions: read a stream: %w", err)
	}
	if len(msgs) == 0 {
		if n, err := s.client.Exists(ctx, k).Result(); err != nil {
			return nil, false, fmt.Errorf("redis sessions: read a stream: %w", err)
		} else if n == 0 {
			return nil, false, legacy.ErrNotFound
		}
	}
	if len(msgs) == 0 && wait > 0 {
		from := after
		if from == "" {
			from = "0"
		}
		streams, err := s.client.XRead(ctx, &redis.XReadArgs{Streams: []string{k, from}, Count: 500, Block: wait}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return nil, false, nil
		case err != nil:
			return nil, false, fmt.Errorf("redis sessions: wait on a stream: %w", err)
		}
		for _, st := range streams {
			msgs = append(msgs, st.Messages...)
		}
	}
	var out []legacy.Event
	ended := false
	for _, m := range msgs {
		if v, ok := m.Values["m"].(string); ok {
			out = append(out, legacy.Event{Pos: m.ID, Msg: []byte(v)})
		} else if _, ok := m.Values["end"]; ok {
			ended = true
			break
		}
	}
	return out, ended, nil
}

// Beat implements legacy.EventStore.
func (s *sessionStore) Beat(ctx context.Context, instance string, ttl time.Duration) error {
	if err := s.client.Set(ctx, s.aliveKey(instance), 1, ttl).Err(); err != nil {
		return fmt.Errorf("redis sessions: beat: %w", err)
	}
	return nil
}

// Alive implements legacy.EventStore.
func (s *sessionStore) Alive(ctx context.Context, instance string) (bool, error) {
	n, err := s.client.Exists(ctx, s.aliveKey(instance)).Result()
	if err != nil {
		return false, fmt.Errorf("redis sessions: read a beat: %w", err)
	}
	return n == 1, nil
}

var _ legacy.EventStore = (*sessionStore)(nil)

// openAppendScript: KEYS = stream; ARGV = meta, message, ttl ms. Starts
// the stream with its meta and adds its first event, in one step.
// Returns the event's position.
var openAppendScript = redis.NewScript(`
redis.call('XADD', KEYS[1], '*', 'meta', ARGV[1])
local id = redis.call('XADD', KEYS[1], '*', 'm', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return id
`)

// OpenStreamAppend is OpenStream then Append of msg in one round trip;
// package legacy uses it for a stream's first event.
func (s *sessionStore) OpenStreamAppend(ctx context.Context, sid, stream string, meta legacy.StreamMeta, msg []byte) (string, error) {
	b, err := json.Marshal(meta)
	if err != nil {
		return "", fmt.Errorf("redis sessions: encode stream meta: %w", err)
	}
	id, err := openAppendScript.Run(ctx, s.client, []string{s.eventsKey(sid, stream)}, b, msg, eventTTL.Milliseconds()).Text()
	if err != nil {
		return "", fmt.Errorf("redis sessions: open a stream: %w", err)
	}
	return id, nil
}

// appendEndScript: KEYS = stream; ARGV = message, ttl ms. Adds the last
// event and the end entry to a stream that exists and shortens its life.
// Returns the event's position, or nil when the stream is gone.
var appendEndScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', '1000', '*', 'm', ARGV[1])
redis.call('XADD', KEYS[1], '*', 'end', '1')
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return id
`)

// AppendEndStream is Append of msg then EndStream in one round trip;
// package legacy uses it for a call's response. The stream is kept
// legacy.EndedEventTTL more.
func (s *sessionStore) AppendEndStream(ctx context.Context, sid, stream string, msg []byte) (string, error) {
	id, err := appendEndScript.Run(ctx, s.client, []string{s.eventsKey(sid, stream)}, msg, legacy.EndedEventTTL.Milliseconds()).Text()
	switch {
	case errors.Is(err, redis.Nil):
		return "", legacy.ErrNotFound
	case err != nil:
		return "", fmt.Errorf("redis sessions: keep a stream's last event: %w", err)
	}
	return id, nil
}
