package legacy

import "context"

// inflight lists the client requests running in a session, by request id
// (JSON text), with the function that cancels each. The first is kept in
// fields of its own and the others, running alongside it, in a map made
// when one does: a live session is made for the requests in progress and
// dropped after them, and most run one request at a time, so most never
// make the map. Guarded by the session's mu.
type inflight struct {
	key    string
	cancel context.CancelCauseFunc // nil: the slot is free
	more   map[string]context.CancelCauseFunc
}

// add lists the request key, and reports false (listing nothing) when a
// request with that id is already running.
func (f *inflight) add(key string, cancel context.CancelCauseFunc) bool {
	if _, dup := f.get(key); dup {
		return false
	}
	if f.cancel == nil {
		f.key, f.cancel = key, cancel
		return true
	}
	if f.more == nil {
		f.more = make(map[string]context.CancelCauseFunc)
	}
	f.more[key] = cancel
	return true
}

// get returns the cancel function of the request key, if it runs.
func (f *inflight) get(key string) (context.CancelCauseFunc, bool) {
	if f.cancel != nil && f.key == key {
		return f.cancel, true
	}
	c, ok := f.more[key]
	return c, ok
}

// remove takes the request key off the list.
func (f *inflight) remove(key string) {
	if f.cancel != nil && f.key == key {
		f.key, f.cancel = "", nil
		return
	}
	delete(f.more, key)
}

// cancels returns the cancel functions of every request listed.
func (f *inflight) cancels() []context.CancelCauseFunc {
	out := make([]context.CancelCauseFunc, 0, len(f.more)+1)
	if f.cancel != nil {
		out = append(out, f.cancel)
	}
	for _, c := range f.more {
		out = append(out, c)
	}
	return out
}
