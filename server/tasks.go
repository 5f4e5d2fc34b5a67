package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonw"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/round"
)

// Tasks (the tasks extension, SEP-2663).
//
// A tool registered with RunAsTask may answer a tools/call with a
// task instead of its result: the client gets a CreateTaskResult at once,
// polls tasks/get until the task is completed (the tool result inlined),
// failed (a JSON-RPC error inlined) or cancelled, answers the questions the
// task asks through tasks/update, and may stop it with tasks/cancel. Only a
// request that declares the extension in its client capabilities gets a
// task; others run the tool synchronously (TaskOptional) or are refused
// with -32021 (TaskRequired).
//
// The handler is the same code either way. A blocking client call
// (Elicit, AskAll, CreateFormElicitation, CreateURLElicitation,
// CreateMessage, ListRoots) made while the call runs as a task puts the
// task in input_required with the question under a key unique for the
// task's life. The question then waits as the task's record, and the
// handler returns; tasks/update on any instance runs it again from the top
// with the answers recorded (taskresume.go, and the write-once contract in
// docs/deployment.md). A tool registered with RunsOnce (or DeferTask)
// waits in place instead, until tasks/update delivers the answer (or the
// task is cancelled, outlives its time to live, or the server closes),
// and its code before a question runs once.
//
// The work runs on the instance that created the task (or took it up
// after an answer); the record lives in
// the TaskOptions.Store, so with a shared store (redisfleet.Fleet.Tasks) any
// instance answers tasks/get, and tasks/update and tasks/cancel reach the
// running instance through the store's signals. The running instance
// renews a lease on the task; if it dies, the lease lapses and the next
// instance to read the task marks it failed, so no task is left working
// forever. Liveness is not decided by a lapsed lease alone: the owner also
// writes a heartbeat per instance, and a task is failed as lost only once
// its owner has been silent for TaskOptions.LostGrace while the reader
// could reach the store (see taskguard.go), so a store outage fails no
// task of a live instance. A finished task's result is written until it
// lands (or the task's time to live ends), the lease kept meanwhile.

// TaskSupport says whether calls of a tool may run as tasks.
type TaskSupport int

const (
	// TaskForbidden (the zero value): calls always run synchronously.
	TaskForbidden TaskSupport = iota
	// TaskOptional: a call that declares the tasks extension runs as a
	// task, any other runs synchronously.
	TaskOptional
	// TaskRequired: a call that declares the tasks extension runs as a
	// task, any other is refused with -32021 before the handler runs.
	TaskRequired
)

// TaskOptions configure the tasks extension. The zero value is usable: a
// memory store for this process and the defaults below.
type TaskOptions struct {
	// Store keeps the tasks. nil means NewMemoryStore for this
	// process; a fleet shares one (redisfleet.Fleet.Tasks).
	Store TaskStore
	// TTL is how long a task lives from its creation (default 1 hour): its
	// status and result can be read until then, and work still running
	// then is stopped and the task failed. Sent as ttlMs. The record is
	// kept Leeway longer, so that an instance whose clock runs ahead still
	// honours the TTL (and a task failed at its TTL is seen failed).
	TTL time.Duration
	// PollInterval is the polling interval suggested to clients (default
	// 1 second, whole milliseconds). Sent as pollIntervalMs.
	PollInterval time.Duration
	// Lease is how long the instance running a task vouches for it without
	// renewing (default 15 seconds); it renews every third of it. When the
	// instance dies, its tasks are marked failed once their lease has
	// lapsed (plus Leeway).
	Lease time.Duration
	// Leeway is the clock skew tolerated between the instance that renewed
	// a lease and one that reads it (default 5 seconds; negative for
	// none).
	Leeway time.Duration
	// LostGrace is how long a task's owner must stay silent (its lease
	// lapsed beyond Leeway and its heartbeat stale), as seen by a reader
	// that reached the store all that while, before the task is failed as
	// lost (default: Lease plus 10 seconds). An instance that dies has its
	// tasks failed about Lease + Leeway + LostGrace after its last renewal;
	// a store outage of any length fails no task of a live instance (its
	// renewals resume within a second of the store's return).
	LostGrace time.Duration

	// Quotas. Anonymous callers are counted by client address
	// (Options.TrustedProxies says how to read it), others by principal.
	// A call over a client's quota is refused with HTTP 429 and -32600,
	// over the server's with 503 and -32603, both with Retry-After, before
	// anything is written. Zero means the default, negative no limit. The
	// limits are this instance's: a fleet of n instances holds n times
	// them.

	// MaxRunning bounds the tasks running on this instance (default
	// 1000: a running task costs about two goroutines and 15 KiB).
	MaxRunning int
	// MaxRunningPerClient bounds the tasks of one client running on this
	// instance (default 32).
	MaxRunningPerClient int
	// MaxStored bounds the tasks this instance created that are still
	// within their time to live (default 10,000).
	MaxStored int
	// MaxStoredPerClient bounds those of one client (default 1000).
	MaxStoredPerClient int
}

// Why a running task's context ends.
var (
	errTaskCancelled = errors.New("the client cancelled the task")
	errTaskExpired   = errors.New("the task outlived its time to live")
	errServerClosed  = errors.New("the server instance running the task shut down")
	errTaskLost      = errors.New("the task was failed by another instance: its lease had lapsed")
	errTaskDone      = errors.New("the task's handler returned")
)

// taskHost runs the tasks of one server and answers tasks/* for every
// task in the store.
type taskHost struct {
	s          *Server
	store      TaskStore
	heartbeats TaskHeartbeats // the store's heartbeats, if it keeps them (taken before store is wrapped)
	signals    bool           // the store updates and signals in one step (updateSignaller)
	ttl        time.Duration
	poll       time.Duration
	lease      time.Duration
	leeway     time.Duration
	grace      time.Duration // LostGrace
	instance   string        // names this instance in records and signals

	storeTimeout                                       time.Duration
	maxRunning, maxRunningPer, maxStored, maxStoredPer int

	mu           sync.Mutex
	runs         map[string]*taskRun // running here, by task id
	receiving    bool                // the signal receiver runs
	beating      bool                // the heartbeat loop runs
	okSince      time.Time           // the heartbeats succeed since (zero: failing, or none yet)
	failing      bool                // the last heartbeat failed
	closed       bool
	draining     bool                   // Shutdown: no new tasks
	running      map[string]int         // running tasks by quota owner
	runningTotal int                    // tasks holding a running slot
	idle         chan struct{}          // closed when runningTotal drops to 0
	stored       []storedTask           // created here, until they expire, in order
	storedHead   int                    // stored[:storedHead] expired
	storedBy     map[string][]time.Time // expiries by quota owner, in order
	wg           sync.WaitGroup         // supervisors, the receiver, the heartbeats
}

func newTaskHost(s *Server, o TaskOptions) (*taskHost, error) {
	h := &taskHost{s: s, store: o.Store, ttl: o.TTL, poll: o.PollInterval, lease: o.Lease, leeway: o.Leeway, grace: o.LostGrace,
		runs: make(map[string]*taskRun), running: make(map[string]int), storedBy: make(map[string][]time.Time),
		storeTimeout: s.opts.StoreTimeout}
	for _, lim := range []struct {
		v   *int
		in  int
		def int
	}{
		{&h.maxRunning, o.MaxRunning, defaultMaxRunningTasks},
		{&h.maxRunningPer, o.MaxRunningPerClient, defaultMaxRunningTasksPerClient},
		{&h.maxStored, o.MaxStored, defaultMaxStoredTasks},
		{&h.maxStoredPer, o.MaxStoredPerClient, defaultMaxStoredTasksPerClient},
	} {
		switch {
		case lim.in == 0:
			*lim.v = lim.def
		case lim.in > 0:
			*lim.v = lim.in
		} // negative: 0, no limit
	}
	for _, d := range []struct {
		v    *time.Duration
		def  time.Duration
		name string
		min  time.Duration
	}{
		{&h.ttl, time.Hour, "TTL", time.Millisecond},
		{&h.poll, time.Second, "PollInterval", time.Millisecond},
		{&h.lease, 15 * time.Second, "Lease", 3 * time.Millisecond},
	} {
		switch {
		case *d.v == 0:
			*d.v = d.def
		case *d.v < d.min:
			return nil, fmt.Errorf("server: TaskOptions.%s %v is below %v", d.name, *d.v, d.min)
		}
		*d.v = d.v.Truncate(time.Millisecond)
	}
	switch {
	case h.leeway == 0:
		h.leeway = 5 * time.Second
	case h.leeway < 0:
		h.leeway = 0
	}
	switch {
	case h.grace == 0:
		h.grace = h.lease + 10*time.Second
	case h.grace < 0:
		return nil, fmt.Errorf("server: negative TaskOptions.LostGrace %v", h.grace)
	}
	if h.store == nil {
		h.store = NewMemoryTaskStore(s.now)
	}
	h.heartbeats, _ = h.store.(TaskHeartbeats) // the wrappers below hide it
	_, h.signals = h.store.(updateSignaller)   // the wrappers pass it through
	if s.tel != nil {
		h.store = timedStore{TaskStore: h.store, s: s}
	}
	h.store = statusStore{TaskStore: h.store, s: s} // status changes reach task listeners
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("server: instance id: %w", err)
	}
	h.instance = base64.RawURLEncoding.EncodeToString(b)
	if err := s.addTasksExtension(); err != nil {
		return nil, err
	}
	return h, nil
}

// addTasksExtension registers the tasks extension through the extension
// API: offered while some tool may run as a task, to 2026-07-28 clients
// only, with the methods tasks/get, tasks/update and tasks/cancel (their
// target, the Mcp-Name, is the taskId).
func (s *Server) addTasksExtension() error {
	ext, err := newExtension(Extension{
		ID:      mcp.TasksExtension,
		Methods: map[string]ExtensionMethod{"tasks/get": {NameParam: "taskId"}, "tasks/update": {NameParam: "taskId"}, "tasks/cancel": {NameParam: "taskId"}},
	})
	if err != nil {
		return err
	}
	ext.active = s.tasksAdvertised
	serve := func(ctx context.Context, r *request, _ notifier) (json.RawMessage, *mcp.Error) {
		return s.handleTask(ctx, r)
	}
	target := func(r *request) (string, bool) {
		if r.p.TaskID == nil {
			return "", false
		}
		return *r.p.TaskID, true
	}
	builtin := map[string]*extMethod{}
	for name := range ext.Methods {
		builtin[name] = &extMethod{serve: serve, target: target}
	}
	return s.addExtension(ext, builtin)
}

// now reads the server's clock (Options.Now, or the wall clock), the one
// the sealer reads.
func (s *Server) now() time.Time { return s.sealer.Now() }

// taskIDBytes is the entropy of a task id: 144 bits, 24 base64url
// characters.
const taskIDBytes = 18

func newTaskID() (string, error) {
	b := make([]byte, taskIDBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("task id: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// validTaskID reports whether id has the form of an id this server mints,
// so that anything else is refused before the store is asked.
func validTaskID(id string) bool {
	if len(id) != base64.RawURLEncoding.EncodedLen(taskIDBytes) {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// tasksAdvertised reports whether the server offers the tasks extension:
// some registered tool may run as a task.
func (s *Server) tasksAdvertised() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, name := range s.tools.order {
		if e := s.tools.byName[name]; e.opts.Task != TaskForbidden {
			return true
		}
	}
	return false
}

// outcome is what a handler returned.
type outcome struct {
	res *ToolResult
	err error
}

// Run states.
const (
	runPending  = iota // the handler runs on the request; no task yet
	runStarted         // the task exists; the handler runs in the background
	runReturned        // the handler returned before a task was started
)

// taskRun is one tools/call that may become, or is, a task running on
// this instance. It is the blocking client calls' backend once started.
type taskRun struct {
	host *taskHost
	ctx  context.Context // the handler's context
	stop context.CancelCauseFunc
	link func() bool // stops the request's context from ending ctx
	req  context.Context

	// finish encodes the handler's outcome as the task's result.
	finish func(res *ToolResult, err error) (json.RawMessage, *mcp.Error)
	// owner is whom the task counts against (quotas); refuse, if set,
	// takes the HTTP status and Retry-After of a call a quota refused.
	owner  string
	refuse func(status int, after time.Duration)

	mu      sync.Mutex
	state   int
	id      string
	seed    *TaskRecord   // the record as created
	changed chan struct{} // closed and replaced when the record may have changed
	// latest is the record as this instance last read or wrote it (the
	// blocking calls find their answers in it, with no read of their
	// own); writes is held around the store calls that set it, so that it
	// only moves forward. taken are the keys whose answers the handler
	// took: the next write here drops them from the record.
	latest *TaskRecord
	taken  []string
	writes sync.Mutex

	// resumes: the handler runs again from the top after a question
	// (taskresume.go); rerunsLost: and after its run was lost. call is
	// Record.Call; replay are the answered questions of the record the
	// run began with, pos the next to hand over; parked is set once a
	// question waits as the record.
	resumes, rerunsLost bool
	call                json.RawMessage
	replay              []TaskInput
	pos                 int
	parked              bool

	started  chan struct{} // closed by start
	early    chan outcome  // the handler's outcome before start
	finished chan struct{} // closed once a started task's handler returned
	wake     chan struct{} // signals from the store
}

// newRun prepares a call that may run as a task. Its handler context keeps
// the request's values; until the task starts it ends with the request.
func (h *taskHost) newRun(req context.Context) *taskRun {
	ctx, stop := context.WithCancelCause(context.WithoutCancel(req))
	run := &taskRun{
		host: h, ctx: ctx, stop: stop, req: req,
		changed:  make(chan struct{}),
		started:  make(chan struct{}),
		early:    make(chan outcome, 1),
		finished: make(chan struct{}),
		wake:     make(chan struct{}, 1),
	}
	run.link = context.AfterFunc(req, func() { stop(context.Cause(req)) })
	return run
}

// running reports whether the call runs as a task now.
func (run *taskRun) running() bool {
	if run == nil {
		return false
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.state == runStarted
}

// taskID returns the task's id once started.
func (run *taskRun) taskID() string {
	if run == nil {
		return ""
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.id
}

// start creates the task: from here on the call runs in the background and
// the client gets a CreateTaskResult. It does nothing on a started task.
func (run *taskRun) start() error {
	run.mu.Lock()
	defer run.mu.Unlock()
	switch run.state {
	case runStarted:
		return nil
	case runReturned:
		return errors.New("start task: the handler has returned")
	}
	if !run.link() { // the request ended first
		return fmt.Errorf("start task: %w", context.Cause(run.ctx))
	}
	h := run.host
	relink := func() { run.link = context.AfterFunc(run.req, func() { run.stop(context.Cause(run.req)) }) }
	id, err := newTaskID()
	if err != nil {
		relink()
		return err
	}
	now := h.s.now()
	rec := &TaskRecord{
		ID:             id,
		Principal:      PrincipalFromContext(run.ctx),
		Owner:          h.instance,
		Status:         mcp.TaskWorking,
		CreatedAt:      now,
		UpdatedAt:      now,
		TTLMs:          h.ttl.Milliseconds(),
		ExpiresAt:      now.Add(h.ttl + h.leeway),
		LeaseUntil:     now.Add(h.lease),
		PollIntervalMs: h.poll.Milliseconds(),
		Trace:          h.s.traceparent(run.ctx),
		Call:           run.call,
	}
	if err := h.reserve(run.owner); err != nil {
		relink()
		return err
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		h.unreserve(run.owner)
		relink()
		return fmt.Errorf("start task: %w", errServerClosed)
	}
	h.runs[id] = run
	h.wg.Add(1) // the supervisor
	if !h.receiving {
		h.receiving = true
		h.wg.Add(1)
		go h.receive()
	}
	h.mu.Unlock()
	h.startBeats()
	cctx, cancel := context.WithTimeout(run.ctx, h.storeTimeout)
	err = h.store.Create(cctx, rec)
	cancel()
	if err != nil {
		h.forget(id, run)
		h.unreserve(run.owner)
		h.wg.Done()
		relink()
		return fmt.Errorf("start task: store: %w", err)
	}
	h.storedTask(run.owner, rec.ExpiresAt)
	run.id, run.seed, run.latest, run.state = id, rec, rec, runStarted
	h.s.taskStarted(run.ctx)
	expire := time.AfterFunc(h.ttl, func() { run.stop(errTaskExpired) })
	closed := context.AfterFunc(h.s.life, func() { run.stop(errServerClosed) })
	go run.supervise(expire, closed)
	close(run.started)
	return nil
}

// handlerDone takes the handler's outcome: to the request while no task
// was started, into the task's record after.
func (run *taskRun) handlerDone(res *ToolResult, err error) {
	run.mu.Lock()
	if run.state == runPending {
		run.state = runReturned
		run.mu.Unlock()
		run.early <- outcome{res, err}
		return
	}
	parked := run.parked
	run.mu.Unlock()
	defer close(run.finished)
	if parked {
		return // the question waits as the record; what the handler returned is moot
	}
	out, e := run.finish(res, err)
	if e == errNoResponse || run.ctx.Err() != nil {
		run.abandon(context.Cause(run.ctx)) // cancelled, expired or closed
		return
	}
	run.storeResult(out, e)
}

// Retrying a result's write: the first pause, and the longest.
const (
	resultRetryFirst = 100 * time.Millisecond
	resultRetryMax   = 2 * time.Second
)

// storeResult writes a finished task's result, again and again (the
// supervisor keeping the lease meanwhile) until it lands, the task is
// settled otherwise or gone, or the task's context ends: its time to live,
// or the server closing.
func (run *taskRun) storeResult(out json.RawMessage, e *mcp.Error) {
	h := run.host
	pause := resultRetryFirst
	for attempt := 0; ; attempt++ {
		now := h.s.now()
		ctx, cancel := context.WithTimeout(context.Background(), h.storeTimeout)
		_, err := h.store.Update(ctx, run.id, func(r *TaskRecord) error {
			if r.Status.Terminal() {
				return ErrTaskNoUpdate
			}
			if r.Owner != h.instance {
				return errTaskMoved
			}
			if e != nil {
				r.Status, r.Error, r.StatusMessage, r.Result = mcp.TaskFailed, e, e.Message, nil
			} else {
				r.Status, r.Result, r.Error, r.StatusMessage = mcp.TaskCompleted, out, nil, ""
			}
			r.Inputs, r.UpdatedAt, r.SuspectSince = nil, now, time.Time{}
			return nil
		})
		cancel()
		switch {
		case err == nil:
			status := mcp.TaskCompleted
			if e != nil {
				status = mcp.TaskFailed
			}
			h.s.record(context.Background(), measurement{Kind: measureTaskStatus, Reason: string(status)})
			if attempt > 0 {
				h.s.log.Info("task: the result was stored after the task store came back", "task", run.id, "attempts", attempt+1)
			}
			return
		case errors.Is(err, ErrTaskNotFound), errors.Is(err, errTaskMoved):
			return
		case attempt == 0:
			h.s.log.Warn("task: storing the result failed; retrying until it lands or the task's time to live ends", "task", run.id, "err", err)
		}
		select {
		case <-run.ctx.Done():
			h.s.log.Error("task: the result could not be stored before the task ended", "task", run.id, "cause", context.Cause(run.ctx), "err", err)
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, resultRetryMax)
	}
}

// release frees the context of a call that returned without a task.
func (run *taskRun) release() {
	run.mu.Lock()
	link := run.link
	run.mu.Unlock()
	link()
	run.stop(errTaskDone)
}

// supervise keeps a started task's lease, listens for its signals and
// settles it when its context ends before its handler returns.
func (run *taskRun) supervise(expire *time.Timer, closed func() bool) {
	h := run.host
	defer h.wg.Done()
	defer h.s.record(context.Background(), measurement{Kind: measureTasksRunning, Delta: -1})
	defer h.unreserve(run.owner)
	defer h.forget(run.id, run)
	defer closed()
	defer expire.Stop()
	defer run.stop(errTaskDone)
	t := time.NewTicker(h.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-run.finished:
			return
		case <-run.ctx.Done():
			run.abandon(context.Cause(run.ctx))
			return
		case <-t.C:
			run.renew()
		case <-run.wake:
			run.check()
		}
	}
}

// renew extends the lease and looks for a cancellation.
func (run *taskRun) renew() {
	h := run.host
	ctx, cancel := context.WithTimeout(context.Background(), run.host.storeTimeout)
	defer cancel()
	now := h.s.now()
	run.writes.Lock()
	defer run.writes.Unlock()
	rec, err := run.update(ctx, func(r *TaskRecord) error {
		if r.Status.Terminal() {
			return ErrTaskNoUpdate
		}
		r.LeaseUntil, r.SuspectSince = now.Add(h.lease), time.Time{}
		return nil
	})
	run.observe(rec, err)
}

// update is the store's Update for the run's own writes, run.writes
// held: it also drops the inputs whose answers the handler took, and keeps
// the record as stored in latest.
func (run *taskRun) update(ctx context.Context, fn func(*TaskRecord) error) (*TaskRecord, error) {
	run.mu.Lock()
	taken := slices.Clone(run.taken)
	run.mu.Unlock()
	rec, err := run.host.store.Update(ctx, run.id, func(r *TaskRecord) error {
		if r.Owner != run.host.instance && !r.Status.Terminal() {
			return errTaskMoved
		}
		if err := fn(r); err != nil {
			return err
		}
		dropTaken(r, taken)
		return nil
	})
	if err == nil {
		run.mu.Lock()
		run.latest = rec
		run.taken = slices.DeleteFunc(run.taken, func(k string) bool { return !hasInput(rec, k) }) // the ones dropped
		run.mu.Unlock()
	}
	return rec, err
}

// check rereads the record after a signal.
func (run *taskRun) check() {
	ctx, cancel := context.WithTimeout(context.Background(), run.host.storeTimeout)
	defer cancel()
	run.writes.Lock()
	defer run.writes.Unlock()
	rec, err := run.host.store.Get(ctx, run.id)
	if err == nil {
		run.mu.Lock()
		run.latest = rec
		run.mu.Unlock()
	}
	run.observe(rec, err)
}

// observe stops the handler of a task that was settled elsewhere and wakes
// the blocking calls waiting for answers.
func (run *taskRun) observe(rec *TaskRecord, err error) {
	switch {
	case errors.Is(err, ErrTaskNotFound):
		run.stop(errTaskExpired)
	case errors.Is(err, errTaskMoved):
		run.stop(errTaskMoved)
	case err != nil:
		run.host.s.log.Warn("task: reading the task store failed", "task", run.id, "err", err)
	case rec.Status == mcp.TaskCancelled:
		run.stop(errTaskCancelled)
	case rec.Status == mcp.TaskFailed:
		run.stop(errTaskLost)
	case rec.Owner != run.host.instance:
		run.stop(errTaskMoved)
	}
	run.poke()
}

// poke wakes every blocking call waiting on the task.
func (run *taskRun) poke() {
	run.mu.Lock()
	close(run.changed)
	run.changed = make(chan struct{})
	run.mu.Unlock()
}

// changes returns the channel the next poke closes.
func (run *taskRun) changes() <-chan struct{} {
	run.mu.Lock()
	defer run.mu.Unlock()
	return run.changed
}

// abandon fails a task whose handler was stopped by its time to live or by
// the server closing. A cancelled task is cancelled already.
func (run *taskRun) abandon(cause error) {
	var msg string
	switch cause {
	case errTaskExpired:
		msg = "the task outlived its time to live (ttlMs) and was stopped"
	case errServerClosed:
		msg = "the server instance running the task shut down before it finished; its work is lost, call the tool again"
	default:
		return
	}
	h := run.host
	now := h.s.now()
	ctx, cancel := context.WithTimeout(context.Background(), run.host.storeTimeout)
	defer cancel()
	_, err := h.store.Update(ctx, run.id, func(r *TaskRecord) error {
		if r.Status.Terminal() || r.Owner != h.instance {
			return ErrTaskNoUpdate
		}
		if cause == errServerClosed && run.giveUp(r, now) {
			return nil // another instance runs it again
		}
		failTask(r, now, msg)
		return nil
	})
	if err != nil && !errors.Is(err, ErrTaskNotFound) {
		h.s.log.Error("task: marking an abandoned task failed did not work", "task", run.id, "err", err)
	}
}

// failTask moves r to failed with an internal error saying why.
func failTask(r *TaskRecord, now time.Time, why string) {
	r.Status = mcp.TaskFailed
	r.Error = &mcp.Error{Code: mcp.InternalError, Message: "Internal error: " + why}
	r.StatusMessage = why
	r.Result, r.Inputs, r.UpdatedAt = nil, nil, now
}

// forget drops run from the runs of this instance (unless a later run of
// the same task took its place).
func (h *taskHost) forget(id string, run *taskRun) {
	h.mu.Lock()
	if h.runs[id] == run {
		delete(h.runs, id)
	}
	h.mu.Unlock()
}

// receive runs the store's signal receiver until the server closes.
func (h *taskHost) receive() {
	defer h.wg.Done()
	life := h.s.life
	pause := 100 * time.Millisecond
	for life.Err() == nil {
		err := h.store.Signals(life, h.instance, h.deliver)
		if life.Err() != nil {
			return
		}
		h.s.log.Warn("tasks: receiving signals failed; retrying (running tasks still reread the store every lease/3)", "err", err, "in", pause)
		select {
		case <-life.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, 5*time.Second)
	}
}

// deliver hands a signal to the task it names, if it runs here.
func (h *taskHost) deliver(id string) {
	h.mu.Lock()
	run := h.runs[id]
	h.mu.Unlock()
	if run == nil {
		return
	}
	select {
	case run.wake <- struct{}{}:
	default: // one is pending already
	}
}

// close stops accepting tasks and waits for the supervisors and the
// receiver (Server.Close has ended the server's life, which stops them).
func (h *taskHost) close() {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.wg.Wait()
}

// ask is the blocking client calls' backend for a running task: it puts
// the questions in the task under fresh keys (input_required) and waits
// until tasks/update has answered all of them, then takes the answers out
// of the record (working again once nothing is pending).
func (run *taskRun) ask(ctx context.Context, irs []mrtr.InputRequest, timeout time.Duration) ([]json.RawMessage, error) {
	h := run.host
	reqs := make([]json.RawMessage, len(irs))
	for i, ir := range irs {
		b, err := ir.AppendJSON(nil)
		if err != nil {
			return nil, fmt.Errorf("task: encode %s: %w", ir.Method(), err)
		}
		reqs[i] = b
	}
	if run.resumes {
		return run.askRecorded(ctx, irs, reqs)
	}
	var keys []string
	now := h.s.now()
	actx, cancel := context.WithTimeout(ctx, h.storeTimeout)
	defer cancel()
	run.writes.Lock()
	_, err := run.update(actx, func(r *TaskRecord) error {
		if r.Status.Terminal() {
			return terminalError(r)
		}
		n := len(r.Inputs)
		if err := addInputs(r, irs, reqs); err != nil {
			return err
		}
		keys = keys[:0]
		for _, in := range r.Inputs[n:] {
			keys = append(keys, in.Key)
		}
		r.Status, r.StatusMessage, r.UpdatedAt = mcp.TaskInputRequired, "", now
		return nil
	})
	run.writes.Unlock()
	if err != nil {
		return nil, fmt.Errorf("task: ask the client: %w", err)
	}
	ctx, endQuestion := run.question(ctx, irs)
	defer endQuestion()
	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		changed := run.changes()
		answers, err := run.collect(keys)
		switch {
		case answers != nil:
			return answers, nil
		case isTerminal(err):
			return nil, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			run.withdraw(keys)
			return nil, fmt.Errorf("task: waiting for the client: %w", context.Cause(ctx))
		case <-expire:
			run.withdraw(keys)
			return nil, fmt.Errorf("task: waiting for the client: %w", ErrTimeout)
		}
	}
}

// addInputs adds the questions (irs, encoded as reqs) to r under fresh
// keys. Questions are numbered by their position in the task, as rounds
// number them in the call (baton:0 first); one asked WithKey (or Keyed)
// keeps its key, which must be new for the task's life, since a client
// may remember the keys it answered.
func addInputs(r *TaskRecord, irs []mrtr.InputRequest, reqs []json.RawMessage) error {
	for i, q := range reqs {
		k := irs[i].Key()
		if k == "" {
			k = round.AutoKey(r.Keys)
		} else if slices.Contains(r.Named, k) {
			return fmt.Errorf("question key %s was already used in this task; a task's keys are unique for its life (SEP-2663), so choose a new one", clip.Quote(k))
		} else {
			r.Named = append(r.Named, k)
		}
		r.Keys++
		r.Inputs = append(r.Inputs, TaskInput{Key: k, Request: q})
	}
	return nil
}

// errAnswersPending: some of the keys are not answered yet.
var errAnswersPending = errors.New("answers pending")

// terminalErr is the error of a blocking call in a task that was settled
// while it asked.
type terminalErr struct{ status mcp.TaskStatus }

func (e *terminalErr) Error() string {
	return "task: the task is " + string(e.status)
}

func (e *terminalErr) Unwrap() error {
	switch e.status {
	case mcp.TaskCancelled:
		return errTaskCancelled
	case mcp.TaskFailed:
		return errTaskLost
	}
	return nil
}

func terminalError(r *TaskRecord) error { return &terminalErr{status: r.Status} }

func isTerminal(err error) bool {
	var te *terminalErr
	return errors.As(err, &te)
}

// collect returns the answers to keys once all of them are answered in
// the record as this instance last read or wrote it (run.latest: a
// signal, or the lease's renewal, rereads it), or errAnswersPending, or
// the error of a terminal task. It reads and writes nothing: the answers
// taken stay in the record until the next write of this instance drops
// them (run.update), the result's at the latest.
func (run *taskRun) collect(keys []string) ([]json.RawMessage, error) {
	run.mu.Lock()
	defer run.mu.Unlock()
	r := run.latest
	if r.Status.Terminal() {
		return nil, terminalError(r)
	}
	got := make([]json.RawMessage, len(keys))
	for i, k := range keys {
		for _, in := range r.Inputs {
			if in.Key == k {
				got[i] = in.Answer
			}
		}
		if got[i] == nil {
			return nil, errAnswersPending
		}
	}
	run.taken = append(run.taken, keys...)
	return got, nil
}

// hasInput reports whether r holds an input under key.
func hasInput(r *TaskRecord, key string) bool {
	for _, in := range r.Inputs {
		if in.Key == key {
			return true
		}
	}
	return false
}

// dropTaken removes the inputs under keys, whose answers the handler
// took, leaving the status and the time of the last update as they are.
func dropTaken(r *TaskRecord, keys []string) {
	if len(keys) == 0 {
		return
	}
	r.Inputs = slices.DeleteFunc(r.Inputs, func(in TaskInput) bool { return slices.Contains(keys, in.Key) })
	if len(r.Inputs) == 0 {
		r.Inputs = nil
	}
}

// withdraw takes unanswered questions back out of the task.
func (run *taskRun) withdraw(keys []string) {
	ctx, cancel := context.WithTimeout(context.Background(), run.host.storeTimeout)
	defer cancel()
	now := run.host.s.now()
	run.writes.Lock()
	defer run.writes.Unlock()
	_, err := run.update(ctx, func(r *TaskRecord) error {
		if r.Status.Terminal() {
			return ErrTaskNoUpdate
		}
		dropInputs(r, keys, now)
		return nil
	})
	if err != nil && !errors.Is(err, ErrTaskNotFound) {
		run.host.s.log.Warn("task: withdrawing questions failed", "task", run.id, "err", err)
	}
}

// dropInputs removes the inputs under keys; a task left with nothing
// pending is working again.
func dropInputs(r *TaskRecord, keys []string, now time.Time) {
	kept := r.Inputs[:0]
	for _, in := range r.Inputs {
		drop := false
		for _, k := range keys {
			if in.Key == k {
				drop = true
				break
			}
		}
		if !drop {
			kept = append(kept, in)
		}
	}
	r.Inputs = kept
	if len(r.Inputs) == 0 {
		r.Inputs = nil
	}
	if r.Status == mcp.TaskInputRequired && len(r.pending()) == 0 {
		r.Status = mcp.TaskWorking
	}
	r.UpdatedAt = now
}

// taskNotifier forwards the notifications of a call that may become a task
// to its request's stream until it does; a task has no stream, so they are
// dropped after.
type taskNotifier struct {
	next notifier
	run  *taskRun
}

// Notify implements Notifier.
func (n taskNotifier) Notify(ctx context.Context, method string, params any) error {
	if n.next == nil || n.run.running() {
		return nil
	}
	return n.next.Notify(ctx, method, params)
}

// StartTask turns the tools/call being served into a task now: the client
// gets a CreateTaskResult, and the handler goes on in the background, its
// context no longer ending with the request (it ends when the task is
// cancelled, outlives its time to live, or the server closes). Later
// blocking client calls are answered through tasks/get and tasks/update.
//
// It is for tools registered with DeferTask, which gather what
// they need with multi round-trip requests first (SEP-2663 recommends
// finishing those before creating the task), then call StartTask. For
// other task-supporting tools the server starts the task before the
// handler runs. StartTask does nothing, and returns nil, when the call
// does not run as a task (the client did not declare the extension, the
// tool does not support tasks, it is not a tools/call) or already does. It
// fails (with a *mcp.Error the handler should return) when the task
// cannot be stored.
func (c *Call) StartTask() error {
	if c.task == nil {
		return nil
	}
	if err := c.task.start(); err != nil {
		var qe *quotaError
		if errors.As(err, &qe) {
			if c.task.refuse != nil {
				c.task.refuse(qe.status, qe.after)
			}
			return qe.rpc()
		}
		c.task.host.s.log.Error("task: start failed", "err", err)
		if c.task.refuse != nil {
			c.task.refuse(http.StatusServiceUnavailable, time.Second)
		}
		return &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the task could not be created (the task store is unavailable); nothing was stored, try again"}
	}
	return nil
}

// TaskID returns the id of the task the call runs as, or "" when it does
// not run as a task (yet).
func (c *Call) TaskID() string { return c.task.taskID() }

// callToolAsTask serves a tools/call that declared the tasks extension for
// a tool that supports tasks. The handler runs on its own goroutine; the
// request answers with a CreateTaskResult once the task is started (before
// the handler, or by the handler's StartTask), or with the handler's own
// outcome if it returns first (an input_required round of a DeferTask
// tool, say).
func (s *Server) callToolAsTask(ctx context.Context, r *request, e *toolEntry, mc *mrtrCall, req *ToolRequest) (json.RawMessage, *mcp.Error) {
	run := s.tasks.newRun(ctx)
	run.owner = taskOwner(ctx, r.clientAddr(s.opts.TrustedProxies))
	run.refuse = r.refuse
	req.task = run
	req.notifier = taskNotifier{next: req.notifier, run: run}
	if e.resumes() {
		call, err := encodeCall(req)
		if err != nil {
			s.log.Error("task: encoding the call failed", "tool", req.Name, "err", err)
			return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the task's call could not be recorded"}
		}
		run.resumes, run.rerunsLost, run.call = true, e.rerunsLost(), call
	}
	if !e.opts.DeferTask {
		if err := req.StartTask(); err != nil {
			run.release()
			var re *mcp.Error
			errors.As(err, &re)
			return nil, re
		}
	}
	s.runTaskHandler(run, r, e, mc, req)
	select {
	case <-run.started:
		run.mu.Lock()
		seed := run.seed
		run.mu.Unlock()
		r.out.task = true
		return s.encodeTask(seed, "task", false)
	case o := <-run.early:
		defer run.release()
		return s.toolOutcome(ctx, r, e, mc, req.Name, o.res, o.err)
	}
}

// runTaskHandler runs the handler of a call that may be, or is, a task
// (req.task is run), on its own goroutine, its outcome going to run.
func (s *Server) runTaskHandler(run *taskRun, r *request, e *toolEntry, mc *mrtrCall, req *ToolRequest) {
	run.finish = func(res *ToolResult, err error) (json.RawMessage, *mcp.Error) {
		var ue *URLElicitationRequiredError
		switch {
		case run.ctx.Err() != nil:
			return nil, errNoResponse
		case errors.Is(err, mrtr.ErrInputRequired), errors.As(err, &ue):
			s.log.Error("task: the handler asked through an input_required round after its task started", "tool", req.Name, "err", err)
			return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the tool asked for input by ending its round (it returned mrtr.ErrInputRequired or a URLElicitationRequiredError) after its task started; " +
				"a task asks with the calls of its request (Elicit, AskAll, CreateFormElicitation, CreateMessage, ListRoots), which wait for tasks/update"}
		}
		return s.toolOutcome(run.ctx, r, e, mc, req.Name, res, err)
	}
	go func() {
		hctx, endRun := s.taskRunSpan(run, req.Name)
		res, err := invoke(s, "tool", req.Name, func() (*ToolResult, error) { return e.handler(hctx, req) })
		endRun(err)
		run.handlerDone(res, err)
	}()
}

// taskWire is a task on the wire: a CreateTaskResult (resultType "task")
// or a tasks/get result (resultType "complete", with the status's payload).
type taskWire struct {
	ResultType     string          `json:"resultType"`
	TaskID         string          `json:"taskId"`
	Status         mcp.TaskStatus  `json:"status"`
	StatusMessage  string          `json:"statusMessage,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTLMs          int64           `json:"ttlMs"`
	PollIntervalMs int64           `json:"pollIntervalMs,omitempty"`
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage `json:"result,omitempty"`
	Error          *mcp.Error      `json:"error,omitempty"`
	Meta           json.RawMessage `json:"_meta"`
}

// taskTime formats a task timestamp: ISO 8601, UTC, milliseconds.
func taskTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// encodeTask encodes rec; detailed adds what its status carries (pending
// input requests, the result, the error).
func (s *Server) encodeTask(rec *TaskRecord, resultType string, detailed bool) (json.RawMessage, *mcp.Error) {
	w := taskWire{
		ResultType:     resultType,
		TaskID:         rec.ID,
		Status:         rec.Status,
		StatusMessage:  rec.StatusMessage,
		CreatedAt:      taskTime(rec.CreatedAt),
		LastUpdatedAt:  taskTime(rec.UpdatedAt),
		TTLMs:          rec.TTLMs,
		PollIntervalMs: rec.PollIntervalMs,
		Meta:           s.infoMeta,
	}
	if detailed {
		switch rec.Status {
		case mcp.TaskInputRequired:
			b := []byte{'{'}
			for i, in := range rec.pending() {
				if i > 0 {
					b = append(b, ',')
				}
				b = jsonw.Key(b, in.Key)
				b = append(b, in.Request...)
			}
			w.InputRequests = append(b, '}')
		case mcp.TaskCompleted:
			w.Result = rec.Result
		case mcp.TaskFailed:
			w.Error = rec.Error
			if w.Error == nil {
				w.Error = &mcp.Error{Code: mcp.InternalError, Message: "Internal error"}
			}
		}
	}
	return s.encode(w)
}

// unknownTask is the answer for a task id that names no task the caller
// may see: never created, expired, or another principal's. It is the same
// for all three, so that a task's existence leaks to no one else.
func unknownTask(string) *mcp.Error {
	return &mcp.Error{Code: mcp.InvalidParams, Message: "Invalid params: task not found (unknown or expired)"}
}

// storeError logs a failure of the task store and hides its details.
func (h *taskHost) storeError(op string, err error) *mcp.Error {
	h.s.log.Error("task store failed", "op", op, "err", err)
	return &mcp.Error{Code: mcp.InternalError, Message: storeUnavailable}
}

// handleTask serves tasks/get, tasks/update and tasks/cancel, once the
// extension API has checked that the extension is offered and declared.
func (s *Server) handleTask(ctx context.Context, r *request) (_ json.RawMessage, e *mcp.Error) {
	if r.p.TaskID == nil || *r.p.TaskID == "" {
		return nil, invalidParams("%s needs a taskId", r.method)
	}
	var responses *round.Responses // nil for tasks/cancel (see write)
	if r.method == "tasks/update" {
		if r.p.InputResponses == nil {
			return nil, invalidParams("tasks/update needs inputResponses")
		}
		rs, err := round.ParseResponses(r.p.InputResponses)
		if err != nil {
			return nil, invalidParams("%v", err)
		}
		responses = &rs
	}
	h := s.tasks
	// One deadline for the request's store work (Options.StoreTimeout);
	// a store that fails it refuses the request with 503 and Retry-After.
	ctx, cancel := context.WithTimeout(ctx, h.storeTimeout)
	defer cancel()
	defer func() {
		if e != nil && e.Message == storeUnavailable {
			r.refuse(http.StatusServiceUnavailable, time.Second)
		}
	}()
	if r.method == "tasks/get" {
		rec, e := h.load(ctx, *r.p.TaskID, PrincipalFromContext(ctx))
		if e != nil {
			return nil, e
		}
		s.linkTask(ctx, rec)
		return s.encodeTask(rec, "complete", true)
	}
	// tasks/update (responses set) and tasks/cancel: checked on the
	// record they write.
	rec, e := h.write(ctx, *r.p.TaskID, PrincipalFromContext(ctx), responses)
	if e != nil {
		return nil, e
	}
	s.linkTask(ctx, rec)
	return s.ack(), nil
}

// ack is the empty result of tasks/update and tasks/cancel.
func (s *Server) ack() json.RawMessage {
	b := make([]byte, 0, 40+len(s.infoMeta))
	b = append(b, `{"resultType":"complete","_meta":`...)
	b = append(b, s.infoMeta...)
	return append(b, '}')
}

// load reads a task for principal, and fails it if the instance running
// it stopped renewing its lease.
func (h *taskHost) load(ctx context.Context, id, principal string) (*TaskRecord, *mcp.Error) {
	if !validTaskID(id) {
		return nil, unknownTask(id)
	}
	rec, err := h.store.Get(ctx, id)
	switch {
	case errors.Is(err, ErrTaskNotFound):
		return nil, unknownTask(id)
	case err != nil:
		return nil, h.storeError("get", err)
	case rec.Principal != principal:
		return nil, unknownTask(id)
	}
	now := h.s.now()
	if !now.Before(rec.ExpiresAt) {
		return nil, unknownTask(id)
	}
	if unowned(rec) {
		rec, err = h.adopt(ctx, rec)
		switch {
		case errors.Is(err, ErrTaskNotFound):
			return nil, unknownTask(id)
		case err != nil:
			return nil, h.storeError("take up", err)
		}
	}
	if lapsed := func(r *TaskRecord) bool {
		return !r.Status.Terminal() && !unowned(r) && now.After(r.LeaseUntil.Add(h.leeway))
	}; lapsed(rec) {
		rec, err = h.judgeLapsed(ctx, rec, now, lapsed)
		switch {
		case errors.Is(err, ErrTaskNotFound):
			return nil, unknownTask(id)
		case err != nil:
			return nil, h.storeError("fail lapsed", err)
		}
	}
	return rec, nil
}

// answerError is an answer tasks/update cannot accept.
type answerError struct {
	key string
	err error
}

func (e *answerError) Error() string { return fmt.Sprintf("input response %q: %v", e.key, e.err) }

// answer stores the responses to pending inputs of the task, after
// checking each against its request, and signals the running instance.
// Responses to keys that are not pending are ignored (SEP-2663).
func (h *taskHost) answer(ctx context.Context, id string, check func(*TaskRecord) error, responses round.Responses) (*TaskRecord, *mcp.Error) {
	now := h.s.now()
	takes := h.takesRuns()
	var claimed bool
	rec, err := h.updateAndSignal(ctx, id, func(r *TaskRecord) error {
		claimed = false
		if err := check(r); err != nil {
			return err
		}
		if unowned(r) && pastTTL(r, now) {
			failTask(r, now, "the task outlived its time to live (ttlMs) and was stopped")
			return nil
		}
		applied := false
		if r.Status.Terminal() {
			return ErrTaskNoUpdate
		}
		for i := range r.Inputs {
			in := &r.Inputs[i]
			raw, ok := responses.Get(in.Key)
			if !ok || in.Answer != nil {
				continue
			}
			raw = bytes.TrimSpace(raw)
			if err := checkAnswer(in.Request, raw); err != nil {
				return &answerError{key: in.Key, err: err}
			}
			if r.Call != nil && len(in.Request)+len(raw) > maxRecordedInput {
				return &answerError{key: in.Key, err: fmt.Errorf("the answer is %d bytes; this task keeps at most %d bytes per question, request (%d bytes) and answer together", len(raw), maxRecordedInput, len(in.Request))}
			}
			in.Answer, applied = bytes.Clone(raw), true
		}
		if !applied {
			return ErrTaskNoUpdate
		}
		if r.Status == mcp.TaskInputRequired && len(r.pending()) == 0 {
			r.Status = mcp.TaskWorking
		}
		r.UpdatedAt = now
		claimed = takes && h.claim(r, now) // waiting is data: this instance runs it again
		return nil
	})
	if err == nil && claimed {
		h.resume(ctx, rec)
	}
	var ae *answerError
	switch {
	case errors.As(err, &ae):
		return nil, &mcp.Error{Code: mcp.InvalidParams, Message: "Invalid params: " + ae.Error()}
	case errors.Is(err, ErrTaskNotFound), errors.Is(err, errNoSuchTask):
		return nil, unknownTask(id)
	case errors.Is(err, errLeaseLapsed):
		return nil, errLapsedRPC
	case err != nil:
		return nil, h.storeError("update", err)
	}
	return rec, nil
}

// cancel moves the task to cancelled (unless it is terminal: cancelling is
// idempotent) and signals the running instance.
func (h *taskHost) cancel(ctx context.Context, id string, check func(*TaskRecord) error) (*TaskRecord, *mcp.Error) {
	var changed bool
	now := h.s.now()
	rec, err := h.updateAndSignal(ctx, id, func(r *TaskRecord) error {
		changed = false
		if err := check(r); err != nil {
			return err
		}
		if r.Status.Terminal() {
			return ErrTaskNoUpdate
		}
		r.Status, r.StatusMessage = mcp.TaskCancelled, "Cancelled by the client"
		r.Inputs, r.Result, r.Error, r.UpdatedAt = nil, nil, nil, now
		changed = true
		return nil
	})
	switch {
	case errors.Is(err, ErrTaskNotFound), errors.Is(err, errNoSuchTask):
		return nil, unknownTask(id)
	case errors.Is(err, errLeaseLapsed):
		return nil, errLapsedRPC
	case err != nil:
		return nil, h.storeError("cancel", err)
	}
	if changed {
		h.s.record(ctx, measurement{Kind: measureTaskStatus, Reason: string(mcp.TaskCancelled)})
	}
	return rec, nil
}

// signal wakes the instance running rec. A lost signal only delays the
// task: its instance rereads it every lease/3.
func (h *taskHost) signal(ctx context.Context, rec *TaskRecord) {
	if rec.Owner == h.instance {
		h.deliver(rec.ID)
		return
	}
	if err := h.store.Signal(ctx, rec.Owner, rec.ID); err != nil {
		h.s.log.Warn("task: signalling the running instance failed; it notices within lease/3", "task", rec.ID, "err", err)
	}
}

// checkAnswer checks a client's answer against the input request it
// answers, as the blocking call waiting for it will.
func checkAnswer(request, raw json.RawMessage) error {
	var ir mrtr.InputRequest
	if err := ir.UnmarshalJSON(request); err != nil {
		return fmt.Errorf("the stored request is unreadable: %w", err)
	}
	var err error
	switch ir.Method() {
	case mrtr.MethodElicit:
		_, err = ir.Elicitation().CheckResult(raw)
	case mrtr.MethodSample:
		_, err = mcp.ParseCreateMessageResult(raw)
	case mrtr.MethodListRoots:
		_, err = mcp.ParseListRootsResult(raw)
	default:
		err = fmt.Errorf("unknown request method %q", ir.Method())
	}
	return err
}
