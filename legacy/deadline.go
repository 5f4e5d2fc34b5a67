package legacy

import (
	"context"
)

// storeCtx bounds parent by the server's Options.StoreTimeout, the
// deadline of one store call made for a client's request: a stalled store
// (a paused Redis) so costs a request at most that before its 503, as it
// does the server's own requests. A memoryStore neither
// waits nor fails on the calls made with it (every one takes its lock,
// works on a map and returns), so it gets parent as it is: no deadline,
// and no timer per store call, as the memoryEventStore's calls
// (keptStream.storeContext).
func (h *adapter) storeCtx(parent context.Context) (context.Context, context.CancelFunc) {
	if _, mem := h.store.(*memoryStore); mem {
		return parent, noCancel
	}
	return context.WithTimeout(parent, h.d.StoreTimeout())
}

// noCancel is the CancelFunc of a context that needs none.
func noCancel() {}
