package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Errors of a URLFlowStore.
var (
	// ErrURLLinkNotFound: no link with that id (never minted, or expired and
	// dropped).
	ErrURLLinkNotFound = errors.New("urlflow: no such link")
	// ErrURLLinkUsed: the link is no longer pending (a callback claimed it).
	ErrURLLinkUsed = errors.New("urlflow: the link has already been used")
	// ErrURLLinkQuota: the principal has too many pending links.
	ErrURLLinkQuota = errors.New("urlflow: too many pending links for this principal")
)

// The states of a link.
const (
	// URLLinkPending: minted, waiting for its callback.
	URLLinkPending = "pending"
	// URLLinkClaimed: a callback took the link and is running the
	// completion code.
	URLLinkClaimed = "claimed"
	// URLLinkDone: the completion code ran; URLOutcome says how it went.
	URLLinkDone = "done"
)

// URLFlowRecord is a link as a URLFlowStore keeps it. It holds nothing secret: the
// principal, a digest of the call, the expiry and the outcome the
// application's completion code chose to record.
type URLFlowRecord struct {
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
	// State is URLLinkPending, URLLinkClaimed or URLLinkDone.
	State string `json:"state"`
	// Outcome is set once State is URLLinkDone.
	Outcome *URLOutcome `json:"outcome,omitempty"`
}

// URLOutcome is what a finished link recorded: whether the application's
// completion code succeeded, and a non-secret detail for the handler.
type URLOutcome struct {
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

// URLFlowStore keeps links and their completions where every instance of a
// deployment sees them. Each call gets a context with a deadline.
type URLFlowStore interface {
	// Create adds a pending link, failing with ErrURLLinkQuota when the
	// principal already has maxPending pending links. It keeps the record
	// until keep has passed.
	Create(ctx context.Context, rec URLFlowRecord, maxPending int, keep time.Duration) error
	// Get returns the link, or ErrURLLinkNotFound.
	Get(ctx context.Context, id string) (URLFlowRecord, error)
	// Lookup returns the id of the newest link minted for the principal
	// and call binding, or ErrURLLinkNotFound.
	Lookup(ctx context.Context, principal, binding string) (string, error)
	// Claim moves a pending link to URLLinkClaimed atomically and returns
	// it; a link in any other state fails with ErrURLLinkUsed.
	Claim(ctx context.Context, id string) (URLFlowRecord, error)
	// Finish records the outcome of a claimed link (URLLinkDone) and wakes
	// every Wait on it, on every instance.
	Finish(ctx context.Context, id string, out URLOutcome) error
	// Wait returns when the link is done (nil), when it is gone
	// (ErrURLLinkNotFound) or when ctx ends (its error).
	Wait(ctx context.Context, id string) error
}

// memoryURLFlowStore is a URLFlowStore in this process's memory: for one instance, and
// for tests. It is safe for concurrent use.
type memoryURLFlowStore struct {
	clock func() time.Time // drops records by it

	mu    sync.Mutex
	recs  map[string]*memRec
	index map[string]string // principal+"\x00"+binding → id
}

type memRec struct {
	rec  URLFlowRecord
	gone time.Time     // dropped after
	done chan struct{} // closed by Finish
}

// NewMemoryURLFlowStore returns an empty URLFlowStore in this process's memory (the
// default, right for one instance) that drops expired records by now
// (nil: the wall clock). It is safe for concurrent use.
func NewMemoryURLFlowStore(now func() time.Time) URLFlowStore {
	return &memoryURLFlowStore{clock: wallClock(now), recs: map[string]*memRec{}, index: map[string]string{}}
}

func (s *memoryURLFlowStore) now() time.Time {
	return s.clock()
}

func (s *memoryURLFlowStore) sweep(now time.Time) {
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

// Create implements URLFlowStore.
func (s *memoryURLFlowStore) Create(_ context.Context, rec URLFlowRecord, maxPending int, keep time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.sweep(now)
	if _, dup := s.recs[rec.ID]; dup {
		return errors.New("urlflow: duplicate link id")
	}
	n := 0
	for _, m := range s.recs {
		if m.rec.Principal == rec.Principal && m.rec.State == URLLinkPending && now.Before(m.rec.Expires) {
			n++
		}
	}
	if maxPending > 0 && n >= maxPending {
		return ErrURLLinkQuota
	}
	s.recs[rec.ID] = &memRec{rec: rec, gone: now.Add(keep), done: make(chan struct{})}
	s.index[rec.Principal+"\x00"+rec.Binding] = rec.ID
	return nil
}

// Get implements URLFlowStore.
func (s *memoryURLFlowStore) Get(_ context.Context, id string) (URLFlowRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.recs[id]
	if !ok || s.now().After(m.gone) {
		return URLFlowRecord{}, ErrURLLinkNotFound
	}
	return copyRecord(m.rec), nil
}

// Lookup implements URLFlowStore.
func (s *memoryURLFlowStore) Lookup(_ context.Context, principal, binding string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.index[principal+"\x00"+binding]
	if !ok {
		return "", ErrURLLinkNotFound
	}
	if m, ok := s.recs[id]; !ok || s.now().After(m.gone) {
		return "", ErrURLLinkNotFound
	}
	return id, nil
}

// Claim implements URLFlowStore.
func (s *memoryURLFlowStore) Claim(_ context.Context, id string) (URLFlowRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.recs[id]
	if !ok || s.now().After(m.gone) {
		return URLFlowRecord{}, ErrURLLinkNotFound
	}
	if m.rec.State != URLLinkPending {
		return URLFlowRecord{}, ErrURLLinkUsed
	}
	m.rec.State = URLLinkClaimed
	return copyRecord(m.rec), nil
}

// Finish implements URLFlowStore.
func (s *memoryURLFlowStore) Finish(_ context.Context, id string, out URLOutcome) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.recs[id]
	if !ok {
		return ErrURLLinkNotFound
	}
	if m.rec.State != URLLinkClaimed {
		return ErrURLLinkUsed
	}
	m.rec.State = URLLinkDone
	m.rec.Outcome = &out
	close(m.done)
	return nil
}

// Wait implements URLFlowStore.
func (s *memoryURLFlowStore) Wait(ctx context.Context, id string) error {
	s.mu.Lock()
	m, ok := s.recs[id]
	s.mu.Unlock()
	if !ok {
		return ErrURLLinkNotFound
	}
	select {
	case <-m.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func copyRecord(r URLFlowRecord) URLFlowRecord {
	if r.Outcome != nil {
		o := *r.Outcome
		r.Outcome = &o
	}
	return r
}
