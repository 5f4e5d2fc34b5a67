// Package bufpool keeps byte buffers for reuse on hot paths, where a
// buffer is written, handed on (to a Write, or copied out) and then
// garbage: Seal's work buffer (server/internal/seal), the input_required
// result (server) and the events' frames (internal/sse).
package bufpool

import "sync"

// Pool holds byte buffers for reuse. The zero value is ready to use; it
// is safe for concurrent use.
type Pool struct{ p sync.Pool }

// Get returns a buffer of length 0: one kept for reuse, or a new one of
// capacity size.
func (p *Pool) Get(size int) *[]byte {
	if bp, ok := p.p.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, 0, size)
	return &b
}

// Put keeps buf, the buffer Get returned as bp and perhaps grown since,
// for reuse, unless its capacity passed max: a rare large buffer is left
// to the collector rather than held for every later use. The caller must
// no longer use buf's bytes.
func (p *Pool) Put(bp *[]byte, buf []byte, max int) {
	if cap(buf) > max {
		return
	}
	*bp = buf[:0]
	p.p.Put(bp)
}
