package server

import (
	"context"
	"errors"

	"github.com/baton-mcp/baton/tasks"
)

// A task store may also implement updateSignaller: an update and the
// wake-up of the instance running the task in one step (one round trip to
// a shared store instead of two); redisfleet's does. tasks/update and
// tasks/cancel on an instance that does not run the task use it.
type updateSignaller interface {
	// UpdateSignal is Store.Update, then, if fn's last run asked for a
	// write and it was stored, Store.Signal(owner, id), best effort as
	// Signal is (not reported).
	UpdateSignal(ctx context.Context, id string, fn func(*tasks.Record) error, owner string) (*tasks.Record, error)
}

// updateSignal runs UpdateSignal on st, or Update then Signal (its error
// dropped) on a store without it.
func updateSignal(ctx context.Context, st tasks.Store, id string, fn func(*tasks.Record) error, owner string) (*tasks.Record, error) {
	if us, ok := st.(updateSignaller); ok {
		return us.UpdateSignal(ctx, id, fn, owner)
	}
	var wrote bool
	rec, err := st.Update(ctx, id, func(r *tasks.Record) error {
		err := fn(r)
		wrote = err == nil
		return err
	})
	if err == nil && wrote {
		_ = st.Signal(ctx, owner, id)
	}
	return rec, err
}

// UpdateSignal passes the one step through, telling the listeners of a
// status change as Update does.
func (st statusStore) UpdateSignal(ctx context.Context, id string, fn func(*tasks.Record) error, owner string) (*tasks.Record, error) {
	var before tasks.Status
	rec, err := updateSignal(ctx, st.Store, id, func(r *tasks.Record) error {
		before = r.Status
		return fn(r)
	}, owner)
	if err == nil && rec != nil && rec.Status != before {
		st.s.taskStatusChanged(rec)
	}
	return rec, err
}

// UpdateSignal passes the one step through, timed as an update.
func (ts timedStore) UpdateSignal(ctx context.Context, id string, fn func(*tasks.Record) error, owner string) (*tasks.Record, error) {
	var fnErr error
	start := ts.s.now()
	r, err := updateSignal(ctx, ts.Store, id, func(r *tasks.Record) error {
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

// updateAndSignal applies fn to rec's task and, if fn's last run asked
// for a write and it was stored, wakes the instance running the task: in
// one step when the store has it and the task runs elsewhere. A lost
// wake-up only delays the task: its instance rereads it every lease/3.
func (h *taskHost) updateAndSignal(ctx context.Context, rec *tasks.Record, fn func(*tasks.Record) error) (*tasks.Record, error) {
	if rec.Owner != h.instance && h.signals {
		return h.store.(updateSignaller).UpdateSignal(ctx, rec.ID, fn, rec.Owner)
	}
	var wrote bool
	out, err := h.store.Update(ctx, rec.ID, func(r *tasks.Record) error {
		err := fn(r)
		wrote = err == nil
		return err
	})
	if err == nil && wrote {
		h.signal(ctx, rec)
	}
	return out, err
}
