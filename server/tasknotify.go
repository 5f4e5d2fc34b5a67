package server

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// Task notifications (SEP-2663): a subscriptions/listen stream that asks
// for "tasks" in its filter, from a caller that declared TasksExtension,
// gets notifications/tasks whenever one of that caller's tasks changes
// status, wherever the task runs. A task is bound to the principal that
// created it, so only streams of the same authenticated principal hear
// about it; an anonymous stream is never agreed "tasks" (anonymous tasks
// share the empty principal, and their ids must not leak to one another).
//
// Every status change goes through the task store's Update, which the
// server wraps (statusStore): the instance that wrote the change delivers
// it to its own streams, with the record it wrote, and publishes the task
// id through the fan-out (Options.Fanout, as a Change of kind
// TaskStatusChanged). An instance that receives such an id and has streams
// of task listeners reads the record from the store (the store, not the
// message, says whose task it is) and delivers it to the streams of its
// principal. Delivery is best effort, like every listen notification: a
// stream keeps the latest status of at most maxPendingTasks tasks it has
// not sent yet, and a client can always ask tasks/get.

// maxPendingTasks bounds the tasks a stream holds changes for.
const maxPendingTasks = 1024

// maxTaskReads bounds the store reads for remote task changes in flight.
const maxTaskReads = 16

// taskListeners are the streams that asked for task notifications, by
// principal.
type taskListeners struct {
	mu     sync.Mutex
	byUser map[string]map[*taskListener]struct{}
	reads  chan struct{} // semaphore of maxTaskReads
	init   sync.Once
}

type taskListener struct {
	principal string
	signal    chan struct{}

	mu      sync.Mutex
	pending map[string]*TaskRecord // by task id: the latest record
	order   []string
}

func (t *taskListeners) any() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byUser) > 0
}

// openTaskListener registers a task listener for the caller of ctx when f
// asks for tasks, or returns nil (and clears f.Tasks) when it does not or
// the caller is anonymous.
func (s *Server) openTaskListener(ctx context.Context, f *SubscriptionFilter) *taskListener {
	if !f.Tasks {
		return nil
	}
	p := PrincipalFromContext(ctx)
	if p == "" {
		f.Tasks = false
		return nil
	}
	tl := &taskListener{principal: p, signal: make(chan struct{}, 1), pending: map[string]*TaskRecord{}}
	t := &s.taskWatch
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byUser == nil {
		t.byUser = map[string]map[*taskListener]struct{}{}
	}
	if t.byUser[p] == nil {
		t.byUser[p] = map[*taskListener]struct{}{}
	}
	t.byUser[p][tl] = struct{}{}
	return tl
}

func (s *Server) closeTaskListener(tl *taskListener) {
	if tl == nil {
		return
	}
	t := &s.taskWatch
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.byUser[tl.principal], tl)
	if len(t.byUser[tl.principal]) == 0 {
		delete(t.byUser, tl.principal)
	}
}

// ready is the listener's wake-up channel; nil (never ready) for none.
func (tl *taskListener) ready() <-chan struct{} {
	if tl == nil {
		return nil
	}
	return tl.signal
}

func (tl *taskListener) offer(rec *TaskRecord) {
	tl.mu.Lock()
	if _, ok := tl.pending[rec.ID]; !ok {
		if len(tl.order) >= maxPendingTasks {
			tl.mu.Unlock()
			return // best effort: tasks/get still tells
		}
		tl.order = append(tl.order, rec.ID)
	}
	tl.pending[rec.ID] = rec
	tl.mu.Unlock()
	select {
	case tl.signal <- struct{}{}:
	default:
	}
}

func (tl *taskListener) take() []*TaskRecord {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	out := make([]*TaskRecord, 0, len(tl.order))
	for _, id := range tl.order {
		out = append(out, tl.pending[id])
	}
	tl.order, tl.pending = nil, map[string]*TaskRecord{}
	return out
}

// deliverTask offers a task's record to the streams of its principal on
// this instance.
func (s *Server) deliverTask(rec *TaskRecord) {
	if rec.Principal == "" {
		return
	}
	t := &s.taskWatch
	t.mu.Lock()
	defer t.mu.Unlock()
	for tl := range t.byUser[rec.Principal] {
		tl.offer(rec)
	}
}

// taskStatusChanged is called with a record whose status this instance
// just changed: its own streams get it, the other instances its id.
func (s *Server) taskStatusChanged(rec *TaskRecord) {
	s.deliverTask(rec)
	if s.fanout == nil || rec.Principal == "" {
		return
	}
	// Not bound to the server's life: the tasks Close abandons are failed
	// after it ended, and their listeners elsewhere should hear it.
	ctx, cancel := context.WithTimeout(context.Background(), fanoutTimeout)
	defer cancel()
	if err := s.publish(ctx, era.Change{Kind: era.TaskStatusChanged, URI: rec.ID}); err != nil {
		s.log.Warn("fan-out: publishing a task change failed; task listeners on other instances miss it", "err", err)
	}
}

// receiveChange delivers a change from another instance: task changes to
// the task listeners, the others to the hub.
func (s *Server) receiveChange(c era.Change) {
	if c.Kind != era.TaskStatusChanged {
		s.hub.publish(c)
		return
	}
	t := &s.taskWatch
	if !t.any() || !validTaskID(c.URI) {
		return
	}
	t.init.Do(func() { t.reads = make(chan struct{}, maxTaskReads) })
	select {
	case t.reads <- struct{}{}:
	default:
		s.log.Warn("tasks: too many task changes to read at once; a task notification is dropped")
		return
	}
	go func() {
		defer func() { <-t.reads }()
		ctx, cancel := context.WithTimeout(s.life, 2*time.Second)
		defer cancel()
		rec, err := s.tasks.store.Get(ctx, c.URI)
		if err != nil {
			return // expired or unreachable: nothing to tell
		}
		s.deliverTask(rec)
	}()
}

// taskNotification encodes notifications/tasks for a stream: the task as
// tasks/get details it (result or error inline when terminal), with the
// stream's subscription id as its _meta.
func (s *Server) taskNotification(rec *TaskRecord, meta subscriptionMeta) ([]byte, error) {
	raw, e := s.encodeTask(rec, "", true)
	if e != nil {
		return nil, e
	}
	var p map[string]json.RawMessage
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, err
	}
	delete(p, "resultType")
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	p["_meta"] = m
	return rpcwire.EncodeNotification("notifications/tasks", p)
}

// statusStore is the task store as the server uses it: an Update that
// changes a task's status tells its listeners.
type statusStore struct {
	TaskStore
	s *Server
}

func (st statusStore) Update(ctx context.Context, id string, fn func(*TaskRecord) error) (*TaskRecord, error) {
	var before mcp.TaskStatus
	rec, err := st.TaskStore.Update(ctx, id, func(r *TaskRecord) error {
		before = r.Status
		return fn(r)
	})
	if err == nil && rec != nil && rec.Status != before {
		st.s.taskStatusChanged(rec)
	}
	return rec, err
}

// requireTasksExtension is -32021 for a listen stream that asks for task
// notifications without declaring TasksExtension.
func requireTasksExtension(r *request) *mcp.Error {
	if err := r.meta.ClientCapabilities.RequireExtension("subscriptions/listen with notifications.tasks", mcp.TasksExtension); err != nil {
		re, _ := asRPCError(err)
		return re
	}
	return nil
}
