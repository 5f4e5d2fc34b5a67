package legacy

import (
	"context"
	"time"
)

// memCall is a parked server request of a memoryStore.
type memCall struct {
	sid      string
	deadline time.Time
	answer   []byte // nil until answered
}

// sweepCalls drops the parked requests whose ttl passed, when their
// number doubled since the last sweep (amortized O(1)). Called with m.mu
// held.
func (m *memoryStore) sweepCalls(now time.Time) {
	if len(m.calls) < 2*m.callsSwept+64 {
		return
	}
	for k, c := range m.calls {
		if !c.deadline.After(now) {
			delete(m.calls, k)
		}
	}
	m.callsSwept = len(m.calls)
}

// Park implements Store.
func (m *memoryStore) Park(ctx context.Context, sid, key string, ttl time.Duration) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.calls == nil {
		m.calls = make(map[string]*memCall)
	}
	m.sweepCalls(now)
	m.calls[key] = &memCall{sid: sid, deadline: now.Add(ttl)}
	return nil
}

// Answer implements Store.
func (m *memoryStore) Answer(ctx context.Context, sid, key string, answer []byte) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.calls[key]
	if c == nil || c.sid != sid || c.answer != nil || !c.deadline.After(now) {
		return ErrNotWaiting
	}
	c.answer = append([]byte{}, answer...)
	return nil
}

// Answers implements Store.
func (m *memoryStore) Answers(ctx context.Context, keys []string) (map[string][]byte, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string][]byte)
	for _, k := range keys {
		if c := m.calls[k]; c != nil && c.answer != nil && c.deadline.After(now) {
			out[k] = append([]byte{}, c.answer...)
		}
	}
	return out, nil
}

// Unpark implements Store.
func (m *memoryStore) Unpark(ctx context.Context, keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.calls, k)
	}
	return nil
}

// memWait is a call waiting for its client, as a memoryStore keeps it
// (callStore).
type memWait struct {
	call     []byte
	runner   string
	deadline time.Time
}

// waitKey names a waiting call of a session in a memoryStore.
func waitKey(sid, key string) string { return sid + "/" + key }

// SaveCall implements callStore.
func (m *memoryStore) SaveCall(ctx context.Context, sid, key string, call []byte, runner string, ttl time.Duration) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.waits == nil {
		m.waits = make(map[string]*memWait)
	}
	if len(m.waits) >= 2*m.waitsSwept+64 {
		for k, w := range m.waits {
			if !w.deadline.After(now) {
				delete(m.waits, k)
			}
		}
		m.waitsSwept = len(m.waits)
	}
	m.waits[waitKey(sid, key)] = &memWait{call: append([]byte(nil), call...), runner: runner, deadline: now.Add(ttl)}
	return nil
}

// LoadCall implements callStore.
func (m *memoryStore) LoadCall(ctx context.Context, sid, key string) ([]byte, string, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.waits[waitKey(sid, key)]
	if w == nil || !w.deadline.After(now) {
		return nil, "", ErrNotFound
	}
	return append([]byte(nil), w.call...), w.runner, nil
}

// ClaimCall implements callStore.
func (m *memoryStore) ClaimCall(ctx context.Context, sid, key, from, to string) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	w := m.waits[waitKey(sid, key)]
	if w == nil || !w.deadline.After(now) || w.runner != from {
		return ErrNotWaiting
	}
	w.runner = to
	return nil
}

// DropCall implements callStore.
func (m *memoryStore) DropCall(ctx context.Context, sid, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.waits, waitKey(sid, key))
	return nil
}
