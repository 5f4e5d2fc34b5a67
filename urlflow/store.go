package urlflow

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Errors of a Store.
var (
	// ErrNotFound: no link with that id (never minted, or expired and
	// dropped).
	ErrNotFound = errors.New("urlflow: no such link")
	// ErrUsed: the link is no longer pending (a callback claimed it).
	ErrUsed = errors.New("urlflow: the link has already been used")
	// ErrQuota: the principal has too many pending links.
	ErrQuota = errors.New("urlflow: too many pending links for this principal")
)

// The states of a link.
const (
	// StatePending: minted, waiting for its callback.
	StatePending = "pending"
	// StateClaimed: a callback took the link and is running the
	// completion code.
	StateClaimed = "claimed"
	// StateDone: the completion code ran; Outcome says how it went.
	StateDone = "done"
)

// Record is a link as a Store keeps it. It holds nothing secret: the
// principal, a digest of the call, the expiry and the outcome the
// application's completion code chose to record.
type Record struct {
	// ID is the link's unguessable id (22 characters of base64url, 128
	// bits from crypto/rand).
	ID string `json:"id"`
	// Principal is the subject the link was minted for.
	Principal string `json:"principal"`
	// Binding is the digest of the call (method, target, arguments).
	Binding string `json:"binding"`
	// Purpose is the application's short, non-secret label (such as
	// "github").
	Purpose string `json:"purpose,omitempty"`
	// Expires is when the link stops being usable (a Leeway is added on
	// every check).
	Expires time.Time `json:"expires"`
	// State is StatePending, StateClaimed or StateDone.
	State string `json:"state"`
	// Outcome is set once State is StateDone.
	Outcome *Outcome `json:"outcome,omitempty"`
}

// Outcome is what a finished link recorded: whether the application's
// completion code succeeded, and a non-secret detail for the handler.
type Outcome struct {
	// OK reports success.
	OK bool `json:"ok"`
	// Detail is what the completion code returned for the handler (for
	// example "connected as alice"). Never a token.
	Detail string `json:"detail,omitempty"`
	// Error says why the flow failed (the third party's error code, or a
	// generic message with a log reference).
	Error string `json:"error,omitempty"`
	// At is when the callback finished.
	At time.Time `json:"at"`
}

// Store keeps links and their completions where every instance of a
// deployment sees them. Each call gets a context with a deadline.
type Store interface {
	// Create adds a pending link, failing with ErrQuota when the
	// principal already has maxPending pending links. It keeps the record
	// until keep has passed.
	Create(ctx context.Context, rec Record, maxPending int, keep time.Duration) error
	// Get returns the link, or ErrNotFound.
	Get(ctx context.Context, id string) (Record, error)
	// Lookup returns the id of the newest link minted for the principal
	// and call binding, or ErrNotFound.
	Lookup(ctx context.Context, principal, binding string) (string, error)
	// Claim moves a pending link to StateClaimed atomically and returns
	// it; a link in any other state fails with ErrUsed.
	Claim(ctx context.Context, id string) (Record, error)
	// Finish records the outcome of a claimed link (StateDone) and wakes
	// every Wait on it, on every instance.
	Finish(ctx context.Context, id string, out Outcome) error
	// Wait returns when the link is done (nil), when it is gone
	// (ErrNotFound) or when ctx ends (its error).
	Wait(ctx context.Context, id string) error
}

// memoryStore is a Store in this process's memory: for one instance, and
// for tests. It is safe for concurrent use.
type memoryStore struct {
	clock func() time.Time // drops records by it; nil: time.Now

	mu    sync.Mutex
	recs  map[string]*memRec
	index map[string]string // principal+"\x00"+binding → id
}

type memRec struct {
	rec  Record
	gone time.Time     // dropped after
	done chan struct{} // closed by Finish
}

// NewMemoryStore returns an empty Store in this process's memory (the
// default, right for one instance) that drops expired records by now
// (nil: the wall clock). It is safe for concurrent use.
func NewMemoryStore(now func() time.Time) Store {
	return &memoryStore{clock: now, recs: map[string]*memRec{}, index: map[string]string{}}
}

func (s *memoryStore) now() time.Time {
	if s.clock != nil {
		return s.clock()
	}
	return time.Now()
}

func (s *memoryStore) sweep(now time.Time) {
	for id, m := range s.recs {
		if now.After(m.gone) {
			delete(s.recs, id)
			k := m.rec.Principal + "\x00" + m.rec.Binding
			if s.index[k] == id {
				delete(s.index, k)
			}
		}
	}
}

// Create implements Store.
func (s *memoryStore) Create(_ context.Context, rec Record, maxPending int, keep time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	if _, dup := s.recs[rec.ID]; dup {
		return errors.New("urlflow: duplicate link id")
	}
	n := 0
	for _, m := range s.recs {
		if m.rec.Principal == rec.Principal && m.rec.State == StatePending && now.Before(m.rec.Expires) {
			n++
		}
	}
	if maxPending > 0 && n >= maxPending {
		return ErrQuota
	}
	s.recs[rec.ID] = &memRec{rec: rec, gone: now.Add(keep), done: make(chan struct{})}
	s.index[rec.Principal+"\x00"+rec.Binding] = rec.ID
	return nil
}

// Get implements Store.
func (s *memoryStore) Get(_ context.Context, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.recs[id]
	if !ok || s.now().After(m.gone) {
		return Record{}, ErrNotFound
	}
	return copyRecord(m.rec), nil
}

// Lookup implements Store.
func (s *memoryStore) Lookup(_ context.Context, principal, binding string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.index[principal+"\x00"+binding]
	if !ok {
		return "", ErrNotFound
	}
	if m, ok := s.recs[id]; !ok || s.now().After(m.gone) {
		return "", ErrNotFound
	}
	return id, nil
}

// Claim implements Store.
func (s *memoryStore) Claim(_ context.Context, id string) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.recs[id]
	if !ok || s.now().After(m.gone) {
		return Record{}, ErrNotFound
	}
	if m.rec.State != StatePending {
		return Record{}, ErrUsed
	}
	m.rec.State = StateClaimed
	return copyRecord(m.rec), nil
}

// Finish implements Store.
func (s *memoryStore) Finish(_ context.Context, id string, out Outcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.recs[id]
	if !ok {
		return ErrNotFound
	}
	if m.rec.State != StateClaimed {
		return ErrUsed
	}
	m.rec.State = StateDone
	m.rec.Outcome = &out
	close(m.done)
	return nil
}

// Wait implements Store.
func (s *memoryStore) Wait(ctx context.Context, id string) error {
	s.mu.Lock()
	m, ok := s.recs[id]
	s.mu.Unlock()
	if !ok {
		return ErrNotFound
	}
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func copyRecord(r Record) Record {
	if r.Outcome != nil {
		o := *r.Outcome
		r.Outcome = &o
	}
	return r
}
