package legacy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/baton-mcp/baton/mcp"
)

// Record is what every instance of a deployment knows of one 2025-11-25
// HTTP session: what initialize negotiated, who opened it, what the client
// set since, and when it was last used. The live parts of a session (the
// calls in flight, their streams, the answers they wait for, an open GET
// stream) stay in the instance that serves them.
type Record struct {
	// ID is the Mcp-Session-Id: 192 random bits, base64url.
	ID string `json:"id"`
	// ProtocolVersion is the negotiated version.
	ProtocolVersion string `json:"protocolVersion"`
	// Capabilities are the client capabilities declared in initialize.
	Capabilities mcp.ClientCapabilities `json:"capabilities"`
	// ClientInfo is the clientInfo of initialize, if any.
	ClientInfo *mcp.Implementation `json:"clientInfo,omitempty"`
	// Principal is the authenticated subject that opened the session; to
	// any other the session does not exist. Empty for anonymous callers.
	Principal string `json:"principal,omitempty"`
	// Owner is whom the session counts against for
	// Options.MaxSessionsPerClient: "principal:" and the principal, or for
	// anonymous callers "address:" and the client's IP address.
	Owner string `json:"owner"`
	// LogLevel is the level set by logging/setLevel.
	LogLevel string `json:"logLevel"`
	// Subscriptions are the URIs of resources/subscribe, in order.
	Subscriptions []string `json:"subscriptions,omitempty"`
	// Stream names the instance holding the session's GET stream, if one
	// is open: session notifications sent by another instance go there.
	Stream string `json:"stream,omitempty"`
	// Rev counts the updates of the record: Update increments it, so that
	// an instance can tell a newer reading from an older one.
	Rev int64 `json:"rev"`
	// CreatedAt is when initialize created the session.
	CreatedAt time.Time `json:"createdAt"`
	// LastUsed is when the session was last used (see Options.SessionIdle),
	// by the store's clock. The store sets it; it is not part of what
	// Update writes.
	LastUsed time.Time `json:"-"`
}

// Clone returns a copy of r that can be changed without changing r: its
// Subscriptions are copied. Capabilities and ClientInfo are shared; they
// are set at initialize and never changed.
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := new(Record)
	r.copyTo(c)
	return c
}

// copyTo copies r into dst as Clone does: dst gets its own subscriptions.
func (r *Record) copyTo(dst *Record) {
	*dst = *r
	dst.Subscriptions = slices.Clone(r.Subscriptions)
}

// Limits are the quotas a Store checks when it creates a session.
type Limits struct {
	// Idle is how long the session may go unused before it expires.
	Idle time.Duration
	// MaxSessions bounds the open sessions of the store (0: no limit).
	MaxSessions int
	// MaxPerOwner bounds the open sessions of one Record.Owner (0: no
	// limit).
	MaxPerOwner int
}

// LimitError is returned by Store.Create when a limit refuses a session.
type LimitError struct {
	// PerOwner is true when the owner's quota refused it, false for the
	// store's total.
	PerOwner bool
	// Limit is the limit that was reached.
	Limit int
	// RetryAfter is how long until the earliest of the sessions counted
	// against the limit goes idle for long enough to expire, unless it is
	// used again before: the soonest a slot frees by itself.
	RetryAfter time.Duration
}

// Error says which limit refused the session.
func (e *LimitError) Error() string {
	if e.PerOwner {
		return fmt.Sprintf("legacy sessions: the client has its limit of %d sessions open", e.Limit)
	}
	return fmt.Sprintf("legacy sessions: the limit of %d sessions is reached", e.Limit)
}

// Errors of a Store.
var (
	// ErrNotFound is returned for a session that does not exist: never
	// created, deleted, or expired.
	ErrNotFound = errors.New("legacy sessions: no such session")
	// ErrExists is returned by Create for an id already in use.
	ErrExists = errors.New("legacy sessions: a session with this id exists")
	// ErrNoUpdate is returned by an update function to leave the record
	// as it is: Update then writes nothing and returns the record it read.
	ErrNoUpdate = errors.New("legacy sessions: no update")
	// ErrNotWaiting is returned by Answer when no call of the session
	// waits for that answer: never asked, already answered, or its call
	// ended.
	ErrNotWaiting = errors.New("legacy sessions: no call waits for this answer")
)

// Store keeps the HTTP sessions of a deployment. Every instance that serves
// the endpoint must share one, so that a session made on one instance is
// served by any other, and a message for the instance holding a call (a
// client's answer to one of its requests, a cancellation) reaches it. The
// default is a memory store of one adapter; package redisfleet keeps
// them in Redis for a fleet.
//
// A store expires a session by itself once Limits.Idle has passed since it
// was created or last touched, by its own clock; expiry needs no sweeper.
// Implementations must be safe for concurrent use and hand out copies;
// package storetest checks a new one against the contract.
type Store interface {
	// Create stores a new session, last used now, if the limits allow:
	// otherwise it returns a *LimitError. It returns ErrExists if the id
	// is taken. The record's Owner is counted against lim.MaxPerOwner.
	Create(ctx context.Context, r *Record, lim Limits) error
	// Get returns the session, or ErrNotFound. It does not count as use.
	Get(ctx context.Context, id string) (*Record, error)
	// Touch records a use of the session: it stays for idle from now. It
	// returns the record (LastUsed now), or ErrNotFound.
	Touch(ctx context.Context, id string, idle time.Duration) (*Record, error)
	// Update applies fn to the current record and stores what fn left in
	// it, atomically (fn runs again if the record changed in between).
	// fn returning ErrNoUpdate writes nothing; another error is returned.
	// It does not count as use; fn must not change ID, Owner, Principal or
	// Rev, and the store increments Rev when it writes. It returns the
	// record as stored, or ErrNotFound.
	Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error)
	// Delete removes the session and reports whether it existed.
	Delete(ctx context.Context, id string) (bool, error)
	// Count returns the number of sessions not expired.
	Count(ctx context.Context) (int, error)
	// Publish sends msg to the instance named instance, or to every
	// instance when instance is "". Delivery is best effort: a client's
	// answer is kept with Answer and only a wake-up is published.
	Publish(ctx context.Context, instance string, msg []byte) error
	// Park records that a call of session sid waits, for at most ttl, for
	// the client's answer to the server request awaited under key (a key
	// no instance uses twice). Until Unpark or ttl, Answer keeps an answer
	// for it.
	Park(ctx context.Context, sid, key string, ttl time.Duration) error
	// Answer keeps answer for the request parked under key if it is
	// parked for session sid and not answered yet; otherwise it returns
	// ErrNotWaiting and keeps nothing. A kept answer stays until Unpark or
	// the park's ttl, so that the waiting call reads it even if the
	// message that tells it so is lost.
	Answer(ctx context.Context, sid, key string, answer []byte) error
	// Answers returns the answers kept for keys; keys with none are
	// absent.
	Answers(ctx context.Context, keys []string) (map[string][]byte, error)
	// Unpark forgets the requests parked under keys and their answers.
	Unpark(ctx context.Context, keys ...string) error
	// Receive calls deliver with every message published to instance or
	// to every instance, until ctx ends (it returns ctx's error) or the
	// transport fails. deliver must not block. A adapter with a store of
	// its own runs it in one goroutine and calls it again, after a pause,
	// when it fails.
	Receive(ctx context.Context, instance string, deliver func(msg []byte)) error
}
