// The store of the MCP tasks extension (io.modelcontextprotocol/tasks,
// SEP-2663): the record of one task (TaskRecord), the TaskStore interface
// every instance of a deployment reads and writes them through, and
// NewMemoryTaskStore, the store of a single process. Package redisfleet
// provides one on Redis for a fleet (Fleet.Tasks); package storetest
// checks a new store against the contract.
//
// A store is deliberately dumb: it keeps records, applies an update
// atomically (Update re-runs the caller's function until its write does not
// race another), and carries wake-up signals to the instance running a
// task. What the statuses mean, and who may move a task from one to another,
// is decided by the server, once, for every store. Most programs only
// choose a store (Options.Tasks).

package server

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/baton-mcp/baton/mcp"
)

// TaskInput is one request a task put to its client: an input request as it
// appears in inputRequests on tasks/get, and, once tasks/update delivered
// it, the client's answer, until the task takes it.
type TaskInput struct {
	// Key names the request in inputRequests and inputResponses. A task
	// never uses a key twice.
	Key string `json:"key"`
	// Request is the input request, {"method": ..., "params": ...}.
	Request json.RawMessage `json:"request"`
	// Answer is the client's answer, nil until one arrived.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// TaskRecord is the stored state of one task.
type TaskRecord struct {
	// ID is the task id: an unguessable handle (server mints 144 random
	// bits).
	ID string `json:"id"`
	// Principal is the principal that created the task; only it may read,
	// update or cancel it. Empty for anonymous callers.
	Principal string `json:"principal,omitempty"`
	// Owner names the instance running the task: signals for the task go
	// to it. It is empty while no instance runs the task: a task whose
	// handler returned when it asked (it waits as this record, for
	// tasks/update on any instance to run it again with the answers), or
	// one released to run again elsewhere. Such a task has no lease.
	Owner string `json:"owner"`

	// Status is where the task is; StatusMessage, if set, says more (it is
	// sent to the client).
	Status        mcp.TaskStatus `json:"status"`
	StatusMessage string         `json:"statusMessage,omitempty"`

	// CreatedAt and UpdatedAt are sent as createdAt and lastUpdatedAt.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// TTLMs is the time to live promised to the client, in milliseconds
	// from CreatedAt (sent as ttlMs). Work still running then is stopped.
	TTLMs int64 `json:"ttlMs"`
	// ExpiresAt is when the record goes: CreatedAt plus the time to live,
	// plus the server's clock leeway, so that no instance drops a task
	// before its time to live by its own clock (and a task stopped at its
	// time to live is seen failed for that while). A store may drop the
	// record from then on, and must not return it.
	ExpiresAt time.Time `json:"expiresAt"`
	// LeaseUntil is how long the owner vouches for the task. The owner
	// renews it while the work runs; once it has lapsed (beyond the
	// server's leeway) on a task that is not terminal, any instance that
	// reads the task marks it failed.
	LeaseUntil time.Time `json:"leaseUntil"`
	// PollIntervalMs is the polling interval suggested to the client.
	PollIntervalMs int64 `json:"pollIntervalMs"`
	// SuspectSince is when a reader first found the lease lapsed and the
	// owner's heartbeat stale (zero while the owner vouches for the task).
	// A task is failed as lost only when that is still so a grace period
	// later, so a store outage, which stops every instance's renewals at
	// once, does not fail the tasks of instances that are alive. The owner
	// clears it when it renews.
	SuspectSince time.Time `json:"suspectSince,omitzero"`

	// Inputs are the requests the task waits on, answered or not. A task
	// whose handler runs again from the top (Call set) keeps every
	// request it asked, in order, with its answer: the next run is handed
	// them as the handler asks again.
	Inputs []TaskInput `json:"inputs,omitempty"`
	// Keys counts the input request keys issued so far, so that none is
	// issued twice in the task's life.
	Keys int `json:"keys,omitempty"`
	// Named are the keys the handler chose itself (server.WithKey,
	// mrtr.InputRequest.Keyed) issued so far, so that none is issued
	// twice in the task's life.
	Named []string `json:"named,omitempty"`

	// Call is what another run of the task's handler needs, on any
	// instance: the tools/call's params (the tool's name, its arguments
	// and the request's _meta), as the server encoded them. It is nil for
	// a task whose handler runs once and waits in place.
	Call json.RawMessage `json:"call,omitempty"`
	// Reruns counts the runs of the handler that began after an earlier
	// one was lost (its instance died or shut down while it ran); the
	// server bounds it.
	Reruns int `json:"reruns,omitempty"`

	// Result is the encoded result of a completed task.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the error of a failed task.
	Error *mcp.Error `json:"error,omitempty"`

	// Trace is the W3C traceparent of the request that created the task,
	// when it was traced: the task's run, its questions and the requests
	// about it link to that span, on whatever instance they happen.
	Trace string `json:"trace,omitempty"`
}

// Clone returns a deep copy of r.
func (r *TaskRecord) Clone() *TaskRecord {
	if r == nil {
		return nil
	}
	c := *r
	if r.Inputs != nil {
		c.Inputs = make([]TaskInput, len(r.Inputs))
		for i, in := range r.Inputs {
			c.Inputs[i] = TaskInput{Key: in.Key, Request: slices.Clone(in.Request), Answer: slices.Clone(in.Answer)}
		}
	}
	c.Named = slices.Clone(r.Named)
	c.Call = slices.Clone(r.Call)
	c.Result = slices.Clone(r.Result)
	if r.Error != nil {
		e := *r.Error
		c.Error = &e
	}
	return &c
}

// pending returns the inputs not answered yet, in the order they were
// issued.
func (r *TaskRecord) pending() []TaskInput {
	var p []TaskInput
	for _, in := range r.Inputs {
		if in.Answer == nil {
			p = append(p, in)
		}
	}
	return p
}

// Errors of a Store.
var (
	// ErrTaskNotFound is returned for a task that does not exist: never
	// created, or expired.
	ErrTaskNotFound = errors.New("tasks: no such task")
	// ErrTaskExists is returned by Create for an id already in use.
	ErrTaskExists = errors.New("tasks: a task with this id exists")
	// ErrTaskNoUpdate is returned by an update function to leave the record as
	// it is: Update then writes nothing and returns the record it read,
	// with a nil error.
	ErrTaskNoUpdate = errors.New("tasks: no update")
)

// TaskStore keeps the tasks of a deployment. Every instance that serves the
// deployment's endpoint must share one, so that any instance answers
// tasks/get and a tasks/update or tasks/cancel reaches the instance running
// the task. Implementations must be safe for concurrent use, and must hand
// out copies: a record returned, or passed to an update function, is the
// caller's to change.
type TaskStore interface {
	// Create stores a new task. It returns ErrExists if the id is taken.
	// When it returns nil the task is durable: a Get on any instance finds
	// it (SEP-2663: the CreateTaskResult is sent only after this).
	Create(ctx context.Context, r *TaskRecord) error
	// Get returns the task, or ErrNotFound.
	Get(ctx context.Context, id string) (*TaskRecord, error)
	// Update applies fn to the current record and stores what fn left in
	// it, atomically: if the record changed between the read and the
	// write, fn runs again on the new one. fn returning ErrNoUpdate writes
	// nothing; any other error aborts the update and is returned. Update
	// returns the record as stored (or as read, after ErrNoUpdate), or
	// ErrNotFound. fn must not change ID or ExpiresAt.
	Update(ctx context.Context, id string, fn func(*TaskRecord) error) (*TaskRecord, error)
	// Signal wakes the instance owner about task id: an answer or a
	// cancellation was stored for it. Delivery is best effort; the owner
	// also rereads its tasks periodically.
	Signal(ctx context.Context, owner, id string) error
	// Signals calls deliver with the id of every task signalled to owner,
	// until ctx ends (it then returns ctx's error) or the transport fails.
	// deliver must not block. The server runs it in one goroutine per
	// instance and calls it again, after a pause, when it fails.
	Signals(ctx context.Context, owner string, deliver func(id string)) error
}

// TaskHeartbeats is implemented by a Store that also keeps a heartbeat per
// instance: every instance running tasks writes its own every third of its
// lease, and an instance that finds a task's lease lapsed asks whether the
// owner is still alive before declaring the task lost. One write per
// instance vouches for all its tasks, and it tells "the instance is gone"
// from "the store was unreachable for a while". NewMemoryStore's and
// redisfleet's Fleet.Tasks implement it.
type TaskHeartbeats interface {
	// Beat records that instance is alive until until.
	Beat(ctx context.Context, instance string, until time.Time) error
	// LastBeat returns the until of the instance's latest Beat, or the
	// zero time when none is known (never beat, or forgotten).
	LastBeat(ctx context.Context, instance string) (time.Time, error)
}
