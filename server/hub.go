package server

import (
	"errors"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/baton-mcp/baton/internal/era"
)

// SubscriptionFilter is what a subscriptions/listen stream opts in to: the
// request's params.notifications, and the agreed subset the
// notifications/subscriptions/acknowledged notification sends back (only
// what the server offers). A false or empty member is omitted.
type SubscriptionFilter struct {
	// ToolsListChanged asks for notifications/tools/list_changed
	// ("toolsListChanged").
	ToolsListChanged bool `json:"toolsListChanged,omitempty"`
	// PromptsListChanged asks for notifications/prompts/list_changed
	// ("promptsListChanged").
	PromptsListChanged bool `json:"promptsListChanged,omitempty"`
	// ResourcesListChanged asks for notifications/resources/list_changed
	// ("resourcesListChanged").
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions are the URIs whose
	// notifications/resources/updated the stream wants
	// ("resourceSubscriptions").
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// Tasks asks for notifications/tasks about the caller's own tasks
	// ("tasks"; the tasks extension, which the caller must declare).
	Tasks bool `json:"tasks,omitempty"`
}

// hub delivers changes to the listeners and watchers of this process.
// Delivery coalesces: a listener holds at most one pending flag per list and
// one entry per subscribed URI, and a watcher's queue holds each distinct
// change at most once, so a slow stream or callback costs bounded memory
// and never blocks a publisher. Nothing outside the hub runs under h.mu.
type hub struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	owners    map[string]int // open listeners by owner (see listenOwner)
	watchers  map[*watcher]struct{}
	log       *slog.Logger

	maxStreams, maxPerOwner int // 0: no limit
}

func newHub(log *slog.Logger) *hub {
	return &hub{listeners: make(map[*listener]struct{}), owners: make(map[string]int), watchers: make(map[*watcher]struct{}), log: log}
}

// watcher calls one Watch callback with the changes queued for it, on a
// goroutine of its own that runs while the queue is not empty, so the
// callback sees changes one at a time and in the order they were published.
type watcher struct {
	f   func(era.Change)
	log *slog.Logger

	mu      sync.Mutex
	queue   []era.Change // not yet handed to f
	running bool         // a goroutine is delivering the queue
	stopped bool
}

func (h *hub) watch(f func(era.Change)) func() {
	w := &watcher{f: f, log: h.log}
	h.mu.Lock()
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.watchers, w)
		h.mu.Unlock()
		w.mu.Lock()
		w.stopped = true
		w.queue = nil
		w.mu.Unlock()
	}
}

// offer queues c unless the same change is already waiting, and starts
// delivering if nothing is. It never waits for the callback.
func (w *watcher) offer(c era.Change) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || slices.Contains(w.queue, c) {
		return
	}
	w.queue = append(w.queue, c)
	if !w.running {
		w.running = true
		go w.deliver()
	}
}

// deliver hands the queue to the callback until it is empty or the watcher
// is stopped. A change taken from the queue is past stop's reach.
func (w *watcher) deliver() {
	for {
		w.mu.Lock()
		if w.stopped || len(w.queue) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		c := w.queue[0]
		w.queue[0] = era.Change{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		w.call(c)
	}
}

// call runs the callback, so that a panic in it costs the change, not the
// process.
func (w *watcher) call(c era.Change) {
	defer func() {
		if p := recover(); p != nil {
			w.log.Error("watch callback panicked", "kind", c.Kind, "uri", c.URI, "panic", p, "stack", string(debug.Stack()))
		}
	}()
	w.f(c)
}

type listener struct {
	filter SubscriptionFilter // without ResourceSubscriptions: uris has them
	uris   map[string]bool
	owner  string
	signal chan struct{}

	mu      sync.Mutex
	pending pendingChanges
}

type pendingChanges struct {
	tools, prompts, resources bool
	updated                   []string
}

func (p pendingChanges) empty() bool {
	return !p.tools && !p.prompts && !p.resources && len(p.updated) == 0
}

// errTooManyListeners and errTooManyForOwner say which cap refused a
// listener.
var (
	errTooManyListeners = errors.New("too many listen streams on this server")
	errTooManyForOwner  = errors.New("too many listen streams for this owner")
)

// add registers a listener for owner, unless that would exceed the
// server's cap on streams or the owner's. The listener keeps its own copy
// of the subscribed URIs (a map, with the filter's list dropped), so
// nothing of the request that opened it stays reachable.
func (h *hub) add(f SubscriptionFilter, owner string) (*listener, error) {
	l := &listener{filter: f, owner: owner, signal: make(chan struct{}, 1)}
	l.filter.ResourceSubscriptions = nil
	if len(f.ResourceSubscriptions) > 0 {
		l.uris = make(map[string]bool, len(f.ResourceSubscriptions))
		for _, u := range f.ResourceSubscriptions {
			l.uris[strings.Clone(u)] = true
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.maxPerOwner > 0 && h.owners[owner] >= h.maxPerOwner:
		return nil, errTooManyForOwner
	case h.maxStreams > 0 && len(h.listeners) >= h.maxStreams:
		return nil, errTooManyListeners
	}
	h.listeners[l] = struct{}{}
	h.owners[owner]++
	return l, nil
}

func (h *hub) remove(l *listener) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.listeners[l]; !ok {
		return
	}
	delete(h.listeners, l)
	if h.owners[l.owner]--; h.owners[l.owner] <= 0 {
		delete(h.owners, l.owner)
	}
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.listeners)
}

// publish offers c to every listener and queues it for every watcher. Both
// happen under h.mu, so every watcher's queue follows one publication
// order; no callback runs here.
func (h *hub) publish(c era.Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		l.offer(c)
	}
	for w := range h.watchers {
		w.offer(c)
	}
}

func (l *listener) offer(c era.Change) {
	l.mu.Lock()
	switch {
	case c.Kind == era.ToolsChanged && l.filter.ToolsListChanged:
		l.pending.tools = true
	case c.Kind == era.PromptsChanged && l.filter.PromptsListChanged:
		l.pending.prompts = true
	case c.Kind == era.ResourcesChanged && l.filter.ResourcesListChanged:
		l.pending.resources = true
	case c.Kind == era.ResourceUpdated && l.uris[c.URI]:
		if !slices.Contains(l.pending.updated, c.URI) {
			l.pending.updated = append(l.pending.updated, c.URI)
		}
	default:
		l.mu.Unlock()
		return
	}
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

func (l *listener) take() pendingChanges {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending
	l.pending = pendingChanges{}
	return p
}
