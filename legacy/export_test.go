package legacy

import (
	"context"
	"strings"
	"sync"

	"github.com/baton-mcp/baton/mcp"
)

// Adapter is the concrete adapter New returns, for the external tests that
// reach its test hooks below.
type Adapter = adapter

// Settle returns once h has handed every change its server published
// before the call to the sessions that existed then, or when ctx ends.
//
// Changes reach an adapter on the server's watcher goroutine, after the
// call that made them has returned, so a change made before a session
// existed may still reach it (a harmless extra list_changed). A test that
// asserts exactly what a new session's streams carry settles first. Settle
// registers a probe session subscribed to a URI of its own, publishes an
// update for that URI and waits for the probe to get it: the watcher hands
// changes over in order, so every earlier change has been delivered by
// then, and the update reaches no other session.
func (h *adapter) Settle(ctx context.Context) error {
	uri := randomID("baton-test-settle:")
	arrived := make(chan struct{})
	var once sync.Once
	probe := newSession(h, randomID("settle-"), &initializeParams{ProtocolVersion: versions[0], Capabilities: &mcp.ClientCapabilities{}},
		func(msg []byte) error {
			if strings.Contains(string(msg), uri) {
				once.Do(func() { close(arrived) })
			}
			return nil
		})
	probe.subs = map[string]bool{uri: true}
	h.mu.Lock()
	h.stdio[probe] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.stdio, probe)
		h.mu.Unlock()
		probe.close(errHandlerClosed)
	}()
	h.srv.NotifyResourceUpdated(uri)
	select {
	case <-arrived:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
