package sse

import "github.com/baton-mcp/baton/internal/bufpool"

// Frames holds the buffers that events are framed in, for reuse by the
// ...Framed methods of the streams that share it: a Write does not keep what it is given
// (io.Writer), so an event's frame is garbage once written, and framing
// each in a new buffer was an allocation, and its bytes to collect, for
// every event (two of every blocking elicitation round trip, about 450
// bytes; issue 23). The other methods allocate each frame. Frames is
// handed to each of those methods rather than kept in the Stream, so that
// a Stream stays 64 bytes (a modern request's allocation holds one, at
// the edge of its size class). The zero value is ready to use; it is safe for concurrent use.
type Frames struct{ p bufpool.Pool }

// maxKeptFrame bounds the buffers Frames keeps: a larger event's buffer
// is left to the collector.
const maxKeptFrame = 4096

// writeFrame writes one event carrying data (see frame), in a buffer from
// f when f is not nil. s.mu is held.
func (s *Stream) writeFrame(f *Frames, id, pos string, withPos bool, data []byte) error {
	if f == nil {
		_, err := s.w.Write(frame(id, pos, withPos, data))
		return err
	}
	bp := f.p.Get(512)
	b := appendFrame(*bp, id, pos, withPos, data)
	_, err := s.w.Write(b)
	f.p.Put(bp, b, maxKeptFrame)
	return err
}
