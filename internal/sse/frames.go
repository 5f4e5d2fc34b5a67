package sse

import "sync"

// Frames holds the buffers that events are framed in, for reuse by the
// streams that use it (UseFrames): a Write does not keep what it is given
// (io.Writer), so an event's frame is garbage once written, and framing
// each in a new buffer was an allocation, and its bytes to collect, for
// every event (two of every blocking elicitation round trip, about 450
// bytes; issue 23). A Stream without Frames allocates each frame. The
// zero value is ready to use; it is safe for concurrent use.
type Frames struct{ p sync.Pool }

// maxKeptFrame bounds the buffers Frames keeps: a larger event's buffer
// is left to the collector.
const maxKeptFrame = 4096

// get returns a buffer with length 0.
func (f *Frames) get() *[]byte {
	if b, _ := f.p.Get().(*[]byte); b != nil {
		return b
	}
	b := make([]byte, 0, 512)
	return &b
}

// put keeps b for reuse, unless it grew too large.
func (f *Frames) put(b *[]byte) {
	if cap(*b) > maxKeptFrame {
		return
	}
	*b = (*b)[:0]
	f.p.Put(b)
}

// UseFrames makes s frame its events in buffers from f.
func (s *Stream) UseFrames(f *Frames) { s.frames = f }

// writeFrame writes one event carrying data (see frame), in a buffer from
// s.frames when it has them. s.mu is held.
func (s *Stream) writeFrame(id, pos string, withPos bool, data []byte) error {
	if s.frames == nil {
		_, err := s.w.Write(frame(id, pos, withPos, data))
		return err
	}
	b := s.frames.get()
	*b = appendFrame(*b, id, pos, withPos, data)
	_, err := s.w.Write(*b)
	s.frames.put(b)
	return err
}
