package server

import "time"

// StoreTimeout gives the legacy adapter Options.StoreTimeout, the
// deadline of each store call it makes for a request.
func (d legacyDispatcher) StoreTimeout() time.Duration { return d.s.opts.StoreTimeout }
