package server

import (
	"context"
	"errors"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server/internal/round"
)

// A task store may also implement updateSignaller: an update and the
// wake-up of the instance running the task in one step (one round trip to
// a shared store instead of two); redisfleet's does. tasks/update and
// tasks/cancel on an instance that does not run the task use it.
type updateSignaller interface {
	// UpdateSignal is Store.Update, then, if fn's last run asked for a
	// write and it was stored, Store.Signal(owner, id), best effort as
	// Signal is (not reported). An owner of "" is the record's Owner.
	UpdateSignal(ctx context.Context, id string, fn func(*TaskRecord) error, owner string) (*TaskRecord, error)
}

// updateSignal runs UpdateSignal on st, or Update then Signal (its error
// dropped) on a store without it.
func updateSignal(ctx context.Context, st TaskStore, id string, fn func(*TaskRecord) error, owner string) (*TaskRecord, error) {
	if us, ok := st.(updateSignaller); ok {
		return us.UpdateSignal(ctx, id, fn, owner)
	}
	var wrote bool
	rec, err := st.Update(ctx, id, func(r *TaskRecord) error {
		err := fn(r)
		wrote = err == nil
		return err
	})
	if err == nil && wrote {
		if owner == "" {
			owner = rec.Owner
		}
		_ = st.Signal(ctx, owner, id)
	}
	return rec, err
}

// UpdateSignal passes the one step through, telling the listeners of a
// status change as Update does.
func (st statusStore) UpdateSignal(ctx context.Context, id string, fn func(*TaskRecord) error, owner string) (*TaskRecord, error) {
	var before mcp.TaskStatus
	rec, err := updateSignal(ctx, st.TaskStore, id, func(r *TaskRecord) error {
		before = r.Status
		return fn(r)
	}, owner)
	if err == nil && rec != nil && rec.Status != before {
		st.s.taskStatusChanged(rec)
	}
	return rec, err
}

// UpdateSignal passes the one step through, timed as an update.
func (ts timedStore) UpdateSignal(ctx context.Context, id string, fn func(*TaskRecord) error, owner string) (*TaskRecord, error) {
	var fnErr error
	start := ts.s.now()
	r, err := updateSignal(ctx, ts.TaskStore, id, func(r *TaskRecord) error {
		fnErr = fn(r)
		return fnErr
	}, owner)
	if err != nil && fnErr != nil && errors.Is(err, fnErr) {
		ts.done(ctx, "tasks.update", start, nil) // fn's own error: no failure of the store
	} else {
		ts.done(ctx, "tasks.update", start, err)
	}
	return r, err
}

// updateAndSignal applies fn to task id and, if fn's last run asked for
// a write and it was stored, wakes the instance running the task: in one
// step when the store has it (the wake-up then reaches this instance too
// through the store, when the task runs here). A lost wake-up only delays
// the task: its instance rereads it every lease/3.
func (h *taskHost) updateAndSignal(ctx context.Context, id string, fn func(*TaskRecord) error) (*TaskRecord, error) {
	if h.signals {
		return h.store.(updateSignaller).UpdateSignal(ctx, id, fn, "")
	}
	var wrote bool
	out, err := h.store.Update(ctx, id, func(r *TaskRecord) error {
		err := fn(r)
		wrote = err == nil
		return err
	})
	if err == nil && wrote {
		h.signal(ctx, out)
	}
	return out, err
}

// Why a tasks/update or tasks/cancel, checked on the record it would
// write, goes no further.
var (
	errNoSuchTask  = errors.New("no such task for the caller")
	errLeaseLapsed = errors.New("the task's lease lapsed")
)

// write serves tasks/update (responses not nil) and tasks/cancel for
// principal: the caller's checks run on the record the update writes, so
// that an instance holding the record's current bytes writes with no read
// before (one round trip with the wake-up, on redisfleet). A task whose
// lease lapsed is loaded and judged first (load), then written.
func (h *taskHost) write(ctx context.Context, id, principal string, responses *round.Responses) (*TaskRecord, *mcp.Error) {
	if !validTaskID(id) {
		return nil, unknownTask(id)
	}
	now := h.s.now()
	checks := func(lapseOK bool) func(*TaskRecord) error {
		return func(r *TaskRecord) error {
			switch {
			case r.Principal != principal, !now.Before(r.ExpiresAt):
				return errNoSuchTask
			case !lapseOK && !r.Status.Terminal() && now.After(r.LeaseUntil.Add(h.leeway)):
				return errLeaseLapsed
			}
			return nil
		}
	}
	do := func(check func(*TaskRecord) error) (*TaskRecord, *mcp.Error) {
		if responses != nil {
			return h.answer(ctx, id, check, *responses)
		}
		return h.cancel(ctx, id, check)
	}
	rec, e := do(checks(false))
	if e != errLapsedRPC {
		return rec, e
	}
	if _, e := h.load(ctx, id, principal); e != nil {
		return nil, e
	}
	return do(checks(true))
}

// errLapsedRPC is what answer and cancel return for errLeaseLapsed: write
// takes the slow path; it never reaches a client.
var errLapsedRPC = &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the task's lease lapsed"}
