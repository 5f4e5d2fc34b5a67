package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// memoryTaskStore is a Store for one process: the default of a server that is
// given none. Its tasks are lost when the process ends, and another
// process cannot see them, so a fleet needs a shared store (package
// redisfleet.Fleet.Tasks). It is safe for concurrent use and forgets tasks once they
// expire.
type memoryTaskStore struct {
	now func() time.Time

	mu        sync.Mutex
	recs      map[string]*TaskRecord
	subs      map[string]map[*memoryTaskSub]struct{} // by owner
	beats     map[string]time.Time                   // by instance
	lastSweep time.Time
}

type memoryTaskSub struct{ deliver func(string) }

// NewMemoryTaskStore returns an empty Store in this process's memory (the
// server's default, right for one instance) that tells expired tasks by
// now (nil: the wall clock). It also keeps Heartbeats.
func NewMemoryTaskStore(now func() time.Time) TaskStore { return newMemoryTaskStore(now) }

// newMemoryTaskStore returns an empty memoryTaskStore that tells expired
// tasks by now (nil means the wall clock). Give it the server's clock
// (server.Options.Now).
func newMemoryTaskStore(now func() time.Time) *memoryTaskStore {
	return &memoryTaskStore{now: wallClock(now), recs: make(map[string]*TaskRecord), subs: make(map[string]map[*memoryTaskSub]struct{})}
}

// sweep drops expired records, at most once a minute. m.mu is held.
func (m *memoryTaskStore) sweep(now time.Time) {
	if now.Sub(m.lastSweep) < time.Minute {
		return
	}
	for id, r := range m.recs {
		if !now.Before(r.ExpiresAt) {
			delete(m.recs, id)
		}
	}
	m.lastSweep = now
}

// live returns the record of id unless it is missing or expired. m.mu is
// held.
func (m *memoryTaskStore) live(id string, now time.Time) (*TaskRecord, bool) {
	r, ok := m.recs[id]
	if !ok || !now.Before(r.ExpiresAt) {
		return nil, false
	}
	return r, true
}

// Create implements Store.
func (m *memoryTaskStore) Create(ctx context.Context, r *TaskRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	if _, ok := m.live(r.ID, now); ok {
		return ErrTaskExists
	}
	m.recs[r.ID] = r.Clone()
	return nil
}

// Get implements Store.
func (m *memoryTaskStore) Get(ctx context.Context, id string) (*TaskRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.live(id, m.now())
	if !ok {
		return nil, ErrTaskNotFound
	}
	return r.Clone(), nil
}

// Update implements Store. fn runs under the store's lock, so it must not
// call the store.
func (m *memoryTaskStore) Update(ctx context.Context, id string, fn func(*TaskRecord) error) (*TaskRecord, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.live(id, m.now())
	if !ok {
		return nil, ErrTaskNotFound
	}
	next := cur.Clone()
	if err := fn(next); errors.Is(err, ErrTaskNoUpdate) {
		return cur.Clone(), nil
	} else if err != nil {
		return nil, err
	}
	next.ID, next.ExpiresAt = cur.ID, cur.ExpiresAt
	m.recs[id] = next
	return next.Clone(), nil
}

// Signal implements Store: it calls the deliver function of every Signals
// running for owner in this process.
func (m *memoryTaskStore) Signal(ctx context.Context, owner, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	subs := make([]*memoryTaskSub, 0, len(m.subs[owner]))
	for s := range m.subs[owner] {
		subs = append(subs, s)
	}
	m.mu.Unlock()
	for _, s := range subs {
		s.deliver(id)
	}
	return nil
}

// Signals implements Store.
func (m *memoryTaskStore) Signals(ctx context.Context, owner string, deliver func(id string)) error {
	s := &memoryTaskSub{deliver: deliver}
	m.mu.Lock()
	if m.subs[owner] == nil {
		m.subs[owner] = make(map[*memoryTaskSub]struct{})
	}
	m.subs[owner][s] = struct{}{}
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	delete(m.subs[owner], s)
	if len(m.subs[owner]) == 0 {
		delete(m.subs, owner)
	}
	m.mu.Unlock()
	return ctx.Err()
}

// Beat implements Heartbeats.
func (m *memoryTaskStore) Beat(ctx context.Context, instance string, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.beats == nil {
		m.beats = make(map[string]time.Time)
	}
	now := m.now()
	for k, u := range m.beats { // forget instances silent for a day
		if now.Sub(u) > beatMemory {
			delete(m.beats, k)
		}
	}
	m.beats[instance] = until
	return nil
}

// LastBeat implements Heartbeats.
func (m *memoryTaskStore) LastBeat(ctx context.Context, instance string) (time.Time, error) {
	if err := ctx.Err(); err != nil {
		return time.Time{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.beats[instance], nil
}

// beatMemory is how long a store remembers the heartbeat of an instance
// that stopped beating.
const beatMemory = 24 * time.Hour

var (
	_ TaskStore      = (*memoryTaskStore)(nil)
	_ TaskHeartbeats = (*memoryTaskStore)(nil)
)
