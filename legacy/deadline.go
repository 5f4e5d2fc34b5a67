package legacy

import (
	"context"
	"time"
)

// fallbackStoreTimeout is server's default Options.StoreTimeout, for a
// dispatcher that does not say its own: no store call waits unbounded.
const fallbackStoreTimeout = 5 * time.Second

// requestStoreTimeout returns the deadline of one store call made for a
// client's request: the server's Options.StoreTimeout. A stalled store
// (a paused Redis) so costs a request at most that before its 503, as it
// does the server's own requests.
func (h *adapter) requestStoreTimeout() time.Duration {
	if d, ok := h.d.(interface{ StoreTimeout() time.Duration }); ok {
		if t := d.StoreTimeout(); t > 0 {
			return t
		}
	}
	return fallbackStoreTimeout
}

// storeCtx bounds parent by requestStoreTimeout. A memoryStore neither
// waits nor fails on the calls made with it (every one takes its lock,
// works on a map and returns), so it gets parent as it is: no deadline,
// and no timer per store call, as the memoryEventStore's calls
// (keptStream.storeContext).
func (h *adapter) storeCtx(parent context.Context) (context.Context, context.CancelFunc) {
	if _, mem := h.store.(*memoryStore); mem {
		return parent, noCancel
	}
	return context.WithTimeout(parent, h.requestStoreTimeout())
}

// noCancel is the CancelFunc of a context that needs none.
func noCancel() {}
