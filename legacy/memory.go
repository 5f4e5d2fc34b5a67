package legacy

import (
	"container/heap"
	"context"
	"errors"
	"sync"
	"time"
)

// memoryStore is a Store in this process's memory: the default of a
// adapter, right for one instance. Sessions are expired exactly at their
// idle deadline, whatever the traffic: each operation first drops the
// sessions whose deadline has passed, in deadline order (a heap), so a
// flood of sessions costs O(log n) per operation and never delays the
// expiry of others. Publish and Receive carry messages between the
// Handlers of one process that share the store.
type memoryStore struct {
	now func() time.Time

	mu       sync.Mutex
	sessions map[string]*memEntry
	owners   map[string]map[string]*memEntry
	expiry   memHeap
	subs     map[*memSub]struct{}

	calls      map[string]*memCall // parked server requests, by key
	callsSwept int                 // len(calls) after the last sweep

	waits      map[string]*memWait // calls waiting for their clients (callStore), by waitKey
	waitsSwept int                 // len(waits) after the last sweep
}

// memEntry is one session and its place in the expiry heap.
type memEntry struct {
	rec      *Record
	deadline time.Time
	index    int // in the heap
}

type memSub struct {
	instance string
	deliver  func([]byte)
}

// NewMemoryStore returns an empty Store in this process's memory (a
// adapter's default, right for one instance) that expires sessions by now
// (nil: the wall clock).
func NewMemoryStore(now func() time.Time) Store { return newMemoryStore(now) }

// newMemoryStore returns an empty store that reads the time from
// now (nil: the wall clock).
func newMemoryStore(now func() time.Time) *memoryStore {
	if now == nil {
		now = time.Now
	}
	return &memoryStore{
		now:      now,
		sessions: make(map[string]*memEntry),
		owners:   make(map[string]map[string]*memEntry),
		subs:     make(map[*memSub]struct{}),
	}
}

// expire drops the sessions whose deadline is not after now. Called with
// m.mu held.
func (m *memoryStore) expire(now time.Time) {
	for len(m.expiry) > 0 && !m.expiry[0].deadline.After(now) {
		m.remove(m.expiry[0])
	}
}

// remove drops e. Called with m.mu held.
func (m *memoryStore) remove(e *memEntry) {
	heap.Remove(&m.expiry, e.index)
	delete(m.sessions, e.rec.ID)
	if set := m.owners[e.rec.Owner]; set != nil {
		delete(set, e.rec.ID)
		if len(set) == 0 {
			delete(m.owners, e.rec.Owner)
		}
	}
}

// Create implements Store.
func (m *memoryStore) Create(ctx context.Context, r *Record, lim Limits) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	if set := m.owners[r.Owner]; lim.MaxPerOwner > 0 && len(set) >= lim.MaxPerOwner {
		var first time.Time
		for _, e := range set {
			if first.IsZero() || e.deadline.Before(first) {
				first = e.deadline
			}
		}
		return &LimitError{PerOwner: true, Limit: lim.MaxPerOwner, RetryAfter: first.Sub(now)}
	}
	if lim.MaxSessions > 0 && len(m.sessions) >= lim.MaxSessions {
		return &LimitError{Limit: lim.MaxSessions, RetryAfter: m.expiry[0].deadline.Sub(now)}
	}
	if _, ok := m.sessions[r.ID]; ok {
		return ErrExists
	}
	rec := r.Clone()
	rec.LastUsed = now
	e := &memEntry{rec: rec, deadline: now.Add(lim.Idle)}
	m.sessions[rec.ID] = e
	set := m.owners[rec.Owner]
	if set == nil {
		set = make(map[string]*memEntry)
		m.owners[rec.Owner] = set
	}
	set[rec.ID] = e
	heap.Push(&m.expiry, e)
	return nil
}

// Get implements Store.
func (m *memoryStore) Get(ctx context.Context, id string) (*Record, error) {
	rec := new(Record)
	if err := m.read(id, false, 0, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// Touch implements Store.
func (m *memoryStore) Touch(ctx context.Context, id string, idle time.Duration) (*Record, error) {
	rec := new(Record)
	if err := m.read(id, true, idle, rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// Update implements Store.
func (m *memoryStore) Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	e, ok := m.sessions[id]
	if !ok {
		return nil, ErrNotFound
	}
	next := e.rec.Clone()
	if err := fn(next); errors.Is(err, ErrNoUpdate) {
		return e.rec.Clone(), nil
	} else if err != nil {
		return nil, err
	}
	next.ID, next.Owner, next.Principal, next.LastUsed, next.Rev = e.rec.ID, e.rec.Owner, e.rec.Principal, e.rec.LastUsed, e.rec.Rev+1
	e.rec = next
	return next.Clone(), nil
}

// Delete implements Store.
func (m *memoryStore) Delete(ctx context.Context, id string) (bool, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	e, ok := m.sessions[id]
	if ok {
		m.remove(e)
	}
	return ok, nil
}

// Count implements Store.
func (m *memoryStore) Count(ctx context.Context) (int, error) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	return len(m.sessions), nil
}

// clear drops every session (an adapter closing its own store).
func (m *memoryStore) clear() {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.sessions)
	clear(m.owners)
	clear(m.calls)
	clear(m.waits)
	m.expiry = nil
}

// Publish implements Store: deliver runs in the caller's goroutine.
func (m *memoryStore) Publish(ctx context.Context, instance string, msg []byte) error {
	m.mu.Lock()
	var to []func([]byte)
	for s := range m.subs {
		if instance == "" || s.instance == instance {
			to = append(to, s.deliver)
		}
	}
	m.mu.Unlock()
	for _, deliver := range to {
		deliver(msg)
	}
	return nil
}

// Receive implements Store.
func (m *memoryStore) Receive(ctx context.Context, instance string, deliver func([]byte)) error {
	s := &memSub{instance: instance, deliver: deliver}
	m.mu.Lock()
	m.subs[s] = struct{}{}
	m.mu.Unlock()
	<-ctx.Done()
	m.mu.Lock()
	delete(m.subs, s)
	m.mu.Unlock()
	return ctx.Err()
}

// memHeap orders sessions by deadline, soonest first.
type memHeap []*memEntry

func (h memHeap) Len() int           { return len(h) }
func (h memHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h memHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *memHeap) Push(x any) {
	e := x.(*memEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *memHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

var _ Store = (*memoryStore)(nil)
