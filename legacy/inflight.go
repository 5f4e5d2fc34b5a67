package legacy

import "context"

// inflight lists the client requests running in a session, by request id
// (JSON text), with the function that cancels each. The first is kept in
// fields of its own and the others, running alongside it, in a map made
// when one does: a live session is made for the requests in progress and
// dropped after them, and most run one request at a time, so most never
// make the map. Guarded by the session's mu.
//
// The first request's key is kept as the bytes of its id (mcp.ID.Raw,
// which nothing modifies), compared without a string made of them: a
// string per request was an allocation of every call in a session (issue
// 23); the others' keys are strings, made when they join the map.
type inflight struct {
	key    []byte
	cancel context.CancelCauseFunc // nil: the slot is free
	more   map[string]context.CancelCauseFunc
}

// add lists the request key, and reports false (listing nothing) when a
// request with that id is already running.
func (f *inflight) add(key []byte, cancel context.CancelCauseFunc) bool {
	if f.cancel != nil && string(f.key) == string(key) {
		return false
	}
	if _, dup := f.more[string(key)]; dup {
		return false
	}
	if f.cancel == nil {
		f.key, f.cancel = key, cancel
		return true
	}
	if f.more == nil {
		f.more = make(map[string]context.CancelCauseFunc)
	}
	f.more[string(key)] = cancel
	return true
}

// get returns the cancel function of the request key, if it runs.
func (f *inflight) get(key string) (context.CancelCauseFunc, bool) {
	if f.cancel != nil && string(f.key) == key {
		return f.cancel, true
	}
	c, ok := f.more[key]
	return c, ok
}

// remove takes the request key off the list.
func (f *inflight) remove(key []byte) {
	if f.cancel != nil && string(f.key) == string(key) {
		f.key, f.cancel = nil, nil
		return
	}
	delete(f.more, string(key))
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
