package server

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrAlreadyRedeemed is returned by Redeem for a state whose confirmation
// was redeemed before.
var ErrAlreadyRedeemed = errors.New("this confirmation was already redeemed")

// Ledger remembers single-use redemptions. The specification leaves
// single use to the server ("not single use; where that matters the server
// MUST enforce it"); a Ledger shared by every instance (such as the Redis
// one in package redisfleet) makes a confirmation redeemable once across
// a fleet.
type Ledger interface {
	// Redeem marks id as redeemed until expires (after which it cannot be
	// presented anyway). It returns ErrAlreadyRedeemed if id was redeemed
	// before. Call.Redeem passes the state's expiry plus the server's state
	// leeway, so that an instance whose clock is behind by up to the
	// leeway, and still accepts the state, still finds the entry.
	Redeem(ctx context.Context, id string, expires time.Time) error
}

// memoryLedger is a Ledger for one process. It is safe for concurrent use
// and forgets entries once they expire.
type memoryLedger struct {
	mu        sync.Mutex
	used      map[string]time.Time
	now       func() time.Time
	lastSweep time.Time
}

// NewMemoryLedger returns an empty Ledger in this process's memory, right
// for one instance, that tells expired entries by now (nil: the wall
// clock; give it the server's Options.Now if you set one). It is safe for
// concurrent use and forgets entries once they expire.
func NewMemoryLedger(now func() time.Time) Ledger { return newMemoryLedger(now) }

// newMemoryLedger returns an empty memoryLedger that tells expired
// entries by now (nil means the wall clock). Give it the clock of the
// server whose states it redeems (server.Options.Now).
func newMemoryLedger(now func() time.Time) *memoryLedger {
	return &memoryLedger{used: make(map[string]time.Time), now: wallClock(now)}
}

// Redeem implements Ledger.
func (m *memoryLedger) Redeem(ctx context.Context, id string, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.Sub(m.lastSweep) > time.Minute {
		for k, exp := range m.used {
			if now.After(exp) {
				delete(m.used, k)
			}
		}
		m.lastSweep = now
	}
	if exp, ok := m.used[id]; ok && !now.After(exp) {
		return ErrAlreadyRedeemed
	}
	m.used[id] = expires
	return nil
}

// wallClock returns now, or the wall clock when now is nil. It is the one
// place package server reads the wall clock (New, for Options.Now, and
// newMemoryLedger): a server or a memoryLedger keeps the clock it
// was given, so a test or a simulation can give each its own.
func wallClock(now func() time.Time) func() time.Time {
	if now != nil {
		return now
	}
	return time.Now
}
