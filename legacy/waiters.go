package legacy

// waiters maps the server-to-client requests a session's calls wait on
// (by the key their answer is awaited under) to the channel of the call
// waiting. The first is kept in fields of its own and the others in a map
// made when one is added beside it: a live session is made for the
// requests in progress, and most wait on one question at a time, so most
// never make the map. Guarded by the session's mu.
type waiters struct {
	key  string
	ch   chan<- reply // nil: the slot is free
	more map[string]chan<- reply
}

// set records that ch waits for the answer awaited under key.
func (w *waiters) set(key string, ch chan<- reply) {
	switch {
	case w.ch != nil && w.key == key, w.ch == nil && w.more[key] == nil:
		w.key, w.ch = key, ch
		return
	}
	if w.more == nil {
		w.more = make(map[string]chan<- reply)
	}
	w.more[key] = ch
}

// take removes and returns the waiter for key, if any.
func (w *waiters) take(key string) (chan<- reply, bool) {
	if w.ch != nil && w.key == key {
		ch := w.ch
		w.key, w.ch = "", nil
		return ch, true
	}
	ch, ok := w.more[key]
	if ok {
		delete(w.more, key)
	}
	return ch, ok
}

// takeRaw is take for a key given as bytes (an answer's id as it came),
// and returns the key as the waiter recorded it: the usual waiter, in the
// fields of its own, is found and handed over without a string made of
// key (an allocation of every answer; issue 23).
func (w *waiters) takeRaw(key []byte) (string, chan<- reply, bool) {
	if w.ch != nil && w.key == string(key) {
		k, ch := w.key, w.ch
		w.key, w.ch = "", nil
		return k, ch, true
	}
	if w.more == nil {
		return "", nil, false
	}
	k := string(key)
	ch, ok := w.take(k)
	return k, ch, ok
}

// keys appends the keys waited on to dst.
func (w *waiters) keys(dst []string) []string {
	if w.ch != nil {
		dst = append(dst, w.key)
	}
	for k := range w.more {
		dst = append(dst, k)
	}
	return dst
}

// has reports whether a call waits for the answer awaited under key.
func (w *waiters) has(key string) bool {
	if w.ch != nil && w.key == key {
		return true
	}
	_, ok := w.more[key]
	return ok
}
