package server

import (
	"slices"
	"sync"
)

// ChangeKind says what changed.
type ChangeKind int

// The kinds of change listeners can opt in to.
const (
	ToolsChanged ChangeKind = iota + 1
	PromptsChanged
	ResourcesChanged
	ResourceUpdated
)

var kindNames = map[ChangeKind]string{
	ToolsChanged:     "tools",
	PromptsChanged:   "prompts",
	ResourcesChanged: "resources",
	ResourceUpdated:  "resource-updated",
}

// String names the kind ("tools", "prompts", "resources",
// "resource-updated").
func (k ChangeKind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return "unknown"
}

// ParseChangeKind returns the kind String names.
func ParseChangeKind(s string) (ChangeKind, bool) {
	for k, n := range kindNames {
		if n == s {
			return k, true
		}
	}
	return 0, false
}

// Change is one event for subscriptions/listen streams.
type Change struct {
	Kind ChangeKind
	// URI is the updated resource (ResourceUpdated only).
	URI string
}

// SubscriptionFilter is what a subscriptions/listen stream opts in to.
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// hub delivers changes to the listeners open on this process. Delivery
// coalesces: a listener holds at most one pending flag per list and one
// entry per subscribed URI, so a slow stream costs bounded memory and never
// blocks a publisher.
type hub struct {
	mu        sync.Mutex
	listeners map[*listener]struct{}
	watchers  map[*watcher]struct{}
}

type watcher struct{ f func(Change) }

func newHub() *hub {
	return &hub{listeners: make(map[*listener]struct{}), watchers: make(map[*watcher]struct{})}
}

func (h *hub) watch(f func(Change)) func() {
	w := &watcher{f: f}
	h.mu.Lock()
	h.watchers[w] = struct{}{}
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		delete(h.watchers, w)
		h.mu.Unlock()
	}
}

type listener struct {
	filter SubscriptionFilter
	uris   map[string]bool
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

func (h *hub) add(f SubscriptionFilter) *listener {
	l := &listener{filter: f, signal: make(chan struct{}, 1)}
	if len(f.ResourceSubscriptions) > 0 {
		l.uris = make(map[string]bool, len(f.ResourceSubscriptions))
		for _, u := range f.ResourceSubscriptions {
			l.uris[u] = true
		}
	}
	h.mu.Lock()
	h.listeners[l] = struct{}{}
	h.mu.Unlock()
	return l
}

func (h *hub) remove(l *listener) {
	h.mu.Lock()
	delete(h.listeners, l)
	h.mu.Unlock()
}

func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.listeners)
}

func (h *hub) publish(c Change) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for l := range h.listeners {
		l.offer(c)
	}
	for w := range h.watchers {
		w.f(c)
	}
}

func (l *listener) offer(c Change) {
	l.mu.Lock()
	switch {
	case c.Kind == ToolsChanged && l.filter.ToolsListChanged:
		l.pending.tools = true
	case c.Kind == PromptsChanged && l.filter.PromptsListChanged:
		l.pending.prompts = true
	case c.Kind == ResourcesChanged && l.filter.ResourcesListChanged:
		l.pending.resources = true
	case c.Kind == ResourceUpdated && l.uris[c.URI]:
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
