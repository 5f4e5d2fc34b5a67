package legacy

import (
	"container/heap"
	"context"
	"time"
)

// readRecord reads session sid's record for a request, and touches it when
// the request is use. The default memoryStore copies it into *into (the
// caller's variable) rather than into a copy allocated per request; other
// stores return their own, within the request's store deadline.
func (h *adapter) readRecord(ctx context.Context, sid string, use bool, into *Record) (*Record, error) {
	if m, ok := h.store.(*memoryStore); ok {
		if err := m.read(sid, use, h.opts.SessionIdle, into); err != nil {
			return nil, err
		}
		return into, nil
	}
	sctx, cancel := h.storeCtx(ctx)
	defer cancel()
	if use {
		return h.store.Touch(sctx, sid, h.opts.SessionIdle)
	}
	return h.store.Get(sctx, sid)
}

// read is Touch (when touch is set) or Get, copying the record into *into
// as Record.Clone copies it. Get and Touch read through it.
func (m *memoryStore) read(id string, touch bool, idle time.Duration, into *Record) error {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expire(now)
	e, ok := m.sessions[id]
	if !ok {
		return ErrNotFound
	}
	if touch {
		e.rec.LastUsed = now
		e.deadline = now.Add(idle)
		heap.Fix(&m.expiry, e.index)
	}
	e.rec.copyTo(into)
	return nil
}
