package server

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// The defaults of the task quotas (TaskOptions) and of Options.StoreTimeout.
const (
	// defaultMaxRunningTasks is TaskOptions.MaxRunning when it is zero.
	defaultMaxRunningTasks = 1000
	// defaultMaxRunningTasksPerClient is TaskOptions.MaxRunningPerClient
	// when it is zero.
	defaultMaxRunningTasksPerClient = 32
	// defaultMaxStoredTasks is TaskOptions.MaxStored when it is zero.
	defaultMaxStoredTasks = 10000
	// defaultMaxStoredTasksPerClient is TaskOptions.MaxStoredPerClient
	// when it is zero.
	defaultMaxStoredTasksPerClient = 1000
	// defaultStoreTimeout is Options.StoreTimeout when it is zero.
	defaultStoreTimeout = 5 * time.Second
)

// quotaError refuses a task before anything is written: 429 when the
// client's quota is full, 503 when the server's is (or it shuts down),
// with the seconds to wait.
type quotaError struct {
	status int
	after  time.Duration
	limit  string // the option that sets the limit (rpcwire.Refusal)
	msg    string
}

func (e *quotaError) Error() string { return e.msg }

// rpc is the JSON-RPC error the refused request is answered with.
func (e *quotaError) rpc() *mcp.Error {
	code := mcp.InternalError
	if e.status == http.StatusTooManyRequests {
		code = mcp.InvalidRequest
	}
	return &mcp.Error{Code: code, Message: e.msg, Data: &rpcwire.Refusal{Limit: e.limit, RetryAfterSeconds: retrySeconds(e.after)}}
}

// retrySeconds rounds d up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int64 { return rpcwire.RetrySeconds(d) }

// storedTask is one task this instance created, until it expires.
type storedTask struct {
	expires time.Time
	owner   string
}

// taskOwner is whom a task counts against for the quotas: its principal
// when authenticated, otherwise the client's address.
func taskOwner(ctx context.Context, addr netip.Addr) string {
	if p := PrincipalFromContext(ctx); p != "" {
		return "principal:" + p
	}
	return "address:" + addr.String()
}

// quotaWho names the owner of a quota in an error message.
func quotaWho(owner string) string {
	if strings.HasPrefix(owner, "principal:") {
		return "this principal"
	}
	return "this client address"
}

// reserve counts a task about to be created against the quotas, or says
// why it may not be: the caller must call unreserve if the task is not
// created after all. h.mu is not held.
func (h *taskHost) reserve(owner string) error {
	now := h.s.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.draining {
		return &quotaError{status: http.StatusServiceUnavailable, after: time.Second, limit: limitDraining,
			msg: "this server instance is shutting down and takes no new tasks; try again (another instance will take it)"}
	}
	// Forget the stored tasks that expired: they are in the queues in
	// creation order, and every task lives as long.
	for h.storedHead < len(h.stored) && !now.Before(h.stored[h.storedHead].expires) {
		st := h.stored[h.storedHead]
		h.stored[h.storedHead] = storedTask{}
		h.storedHead++
		if q := h.storedBy[st.owner]; len(q) <= 1 {
			delete(h.storedBy, st.owner)
		} else {
			h.storedBy[st.owner] = q[1:]
		}
	}
	if h.storedHead > 1024 && h.storedHead*2 > len(h.stored) {
		h.stored = append(h.stored[:0], h.stored[h.storedHead:]...)
		h.storedHead = 0
	}
	switch {
	case h.maxRunning > 0 && h.runningTotal >= h.maxRunning:
		return &quotaError{status: http.StatusServiceUnavailable, after: h.poll, limit: "TaskOptions.MaxRunning",
			msg: fmt.Sprintf("Too many tasks running: this server instance runs its limit of %d; try again later", h.maxRunning)}
	case h.maxRunningPer > 0 && h.running[owner] >= h.maxRunningPer:
		return &quotaError{status: http.StatusTooManyRequests, after: h.poll, limit: "TaskOptions.MaxRunningPerClient",
			msg: fmt.Sprintf("Too many tasks running: %s has its limit of %d running; wait for one to finish or cancel one", quotaWho(owner), h.maxRunningPer)}
	case h.maxStored > 0 && len(h.stored)-h.storedHead >= h.maxStored:
		after := h.stored[h.storedHead].expires.Sub(now)
		return &quotaError{status: http.StatusServiceUnavailable, after: after, limit: "TaskOptions.MaxStored",
			msg: fmt.Sprintf("Too many tasks stored: this server instance keeps its limit of %d; try again in %d s", h.maxStored, retrySeconds(after))}
	case h.maxStoredPer > 0 && len(h.storedBy[owner]) >= h.maxStoredPer:
		after := h.storedBy[owner][0].Sub(now)
		return &quotaError{status: http.StatusTooManyRequests, after: after, limit: "TaskOptions.MaxStoredPerClient",
			msg: fmt.Sprintf("Too many tasks stored: %s has its limit of %d tasks within their time to live; try again in %d s", quotaWho(owner), h.maxStoredPer, retrySeconds(after))}
	}
	h.running[owner]++
	h.runningTotal++
	return nil
}

// unreserve gives back a running slot: the task was not created, or its
// supervisor ended.
func (h *taskHost) unreserve(owner string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.runningTotal--
	if h.running[owner]--; h.running[owner] <= 0 {
		delete(h.running, owner)
	}
	if h.runningTotal == 0 && h.idle != nil {
		close(h.idle)
		h.idle = nil
	}
}

// stored records a task created by this instance until it expires.
func (h *taskHost) storedTask(owner string, expires time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stored = append(h.stored, storedTask{expires: expires, owner: owner})
	h.storedBy[owner] = append(h.storedBy[owner], expires)
}

// Liveness.
//
// A task's owner renews the task's lease, and writes its own heartbeat
// (Heartbeats) every third of the lease, from the moment this
// instance first runs or reads tasks. A reader that finds a lease lapsed
// (beyond the leeway) asks whether the owner is alive: its heartbeat is
// fresh (or, for this instance, the task still runs here). If not, the
// reader only marks the task suspect (Record.SuspectSince); it fails the
// task as lost when it still finds it so at least LostGrace later, and
// only if its own heartbeats reached the store all that while. A store
// outage stops every instance's renewals at once: the owner renews within
// a second of the store's return, well inside the grace, and a reader that
// could not reach the store itself declares nothing lost.

// startBeats starts the heartbeat loop once.
func (h *taskHost) startBeats() {
	hb := h.heartbeats
	if hb == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.beating || h.closed {
		return
	}
	h.beating = true // okSince stays zero until the first beat lands
	h.wg.Add(1)
	go h.beats(hb)
}

// beats writes this instance's heartbeat every lease/3 until the server
// closes; after a failure it tries again every second.
func (h *taskHost) beats(hb TaskHeartbeats) {
	defer h.wg.Done()
	life := h.s.life
	for life.Err() == nil {
		now := h.s.now()
		ctx, cancel := context.WithTimeout(life, h.storeTimeout)
		err := hb.Beat(ctx, h.instance, now.Add(h.lease))
		cancel()
		wait := h.lease / 3
		h.mu.Lock()
		switch {
		case err != nil:
			if !h.okSince.IsZero() && life.Err() == nil {
				h.s.log.Warn("tasks: writing this instance's heartbeat failed: the task store is unreachable; no task is declared lost while it is", "err", err)
			}
			h.okSince, h.failing = time.Time{}, true
			wait = min(wait, time.Second)
		case h.okSince.IsZero():
			if h.failing {
				h.s.log.Info("tasks: the task store is reachable again")
			}
			h.okSince, h.failing = now, false
		}
		h.mu.Unlock()
		select {
		case <-life.Done():
			return
		case <-time.After(wait):
		}
	}
}

// storeHealthySince returns since when this instance's heartbeats have
// reached the store without a failure (zero: they fail now, or none was
// written yet).
func (h *taskHost) storeHealthySince() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.okSince
}

// ownerSilent reports whether the owner of rec has stopped vouching for
// it: for this instance, the task no longer runs here; for another, its
// heartbeat is older than the leeway (or unknown). last is the owner's
// last heartbeat, if known.
func (h *taskHost) ownerSilent(ctx context.Context, rec *TaskRecord, now time.Time) (silent bool, last time.Time, err error) {
	if rec.Owner == h.instance {
		h.mu.Lock()
		_, runs := h.runs[rec.ID]
		h.mu.Unlock()
		return !runs, time.Time{}, nil
	}
	hb := h.heartbeats
	if hb == nil {
		return true, time.Time{}, nil
	}
	last, err = hb.LastBeat(ctx, rec.Owner)
	if err != nil {
		return false, time.Time{}, err
	}
	return !now.Before(last.Add(h.leeway)), last, nil
}

// judgeLapsed decides about a task whose lease has lapsed: nothing (its
// owner is alive, or this instance cannot tell), suspect, or lost.
func (h *taskHost) judgeLapsed(ctx context.Context, rec *TaskRecord, now time.Time, lapsed func(*TaskRecord) bool) (*TaskRecord, error) {
	h.startBeats()
	silent, last, err := h.ownerSilent(ctx, rec, now)
	if err != nil {
		return nil, err
	}
	if !silent {
		return rec, nil
	}
	healthy := h.storeHealthySince()
	if h.heartbeats != nil && healthy.IsZero() {
		return rec, nil // the store fails for this instance: it cannot tell
	}
	rerun := false
	out, err := h.store.Update(ctx, rec.ID, func(r *TaskRecord) error {
		rerun = false
		if !lapsed(r) {
			return ErrTaskNoUpdate
		}
		if r.SuspectSince.IsZero() || now.Before(r.SuspectSince) || h.heartbeats != nil && r.SuspectSince.Before(healthy) {
			// First seen silent, or seen before this instance last lost
			// the store: (re)start the grace from now.
			r.SuspectSince = now
			return nil
		}
		if now.Before(r.SuspectSince.Add(h.grace)) {
			return ErrTaskNoUpdate
		}
		why := fmt.Sprintf("the server instance running this task is gone: it renewed neither the task's lease (due %s) nor its heartbeat", taskTime(r.LeaseUntil))
		if !last.IsZero() {
			why += " (due " + taskTime(last) + ")"
		}
		if h.rerunLost(r, now) {
			rerun = true
			return nil
		}
		why += fmt.Sprintf(" for %s after that; its work is lost, call the tool again", h.grace)
		failTask(r, now, why)
		return nil
	})
	if err == nil && rerun {
		h.resume(ctx, out)
	}
	return out, err
}

// storeUnavailable is the message of a request refused because the task
// store could not be reached.
const storeUnavailable = "Internal error: the task store is unavailable (unreachable or too slow); nothing was changed, try again"

// Shutdown of the tasks.

// drain stops taking tasks and waits until none runs here, or ctx ends.
func (h *taskHost) drain(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	if h.runningTotal == 0 {
		h.mu.Unlock()
		return nil
	}
	h.s.log.Info("shutting down: waiting for the tasks running here", "tasks", h.runningTotal)
	if h.idle == nil {
		h.idle = make(chan struct{})
	}
	idle := h.idle
	h.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("server: shutdown: tasks still running: %w", ctx.Err())
	}
}
