package sse

// FinishIDUnflushed is FinishID for a handler that returns as soon as
// it has written the final event: the event is written but not flushed,
// and net/http sends it with the end of the response (the chunked body's
// last chunk) in one write when the handler returns, instead of two.
// A response that is not SSE yet is written as FinishID writes it.
func (s *Stream) FinishIDUnflushed(status int, id string, msg []byte) {
	s.finishUnflushed(nil, status, id, "", false, msg)
}

// FinishIDPosUnflushed is FinishIDUnflushed with the event id stream "."
// pos (see SendIDPos).
func (s *Stream) FinishIDPosUnflushed(status int, stream, pos string, msg []byte) {
	s.finishUnflushed(nil, status, stream, pos, true, msg)
}

// FinishIDPosUnflushedFramed is FinishIDPosUnflushed framing the event in
// a buffer from f (see Frames).
func (s *Stream) FinishIDPosUnflushedFramed(f *Frames, status int, stream, pos string, msg []byte) {
	s.finishUnflushed(f, status, stream, pos, true, msg)
}

// finishUnflushed is FinishIDUnflushed and FinishIDPosUnflushed (see
// frame).
func (s *Stream) finishUnflushed(f *Frames, status int, id, pos string, withPos bool, msg []byte) {
	s.mu.Lock()
	if s.sse && !s.done {
		s.done = true
		_ = s.writeFrame(f, id, pos, withPos, msg)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.finish(status, msg)
}

// Flush sends what was written so far (a final event written by
// FinishIDUnflushed, when the handler must wait before it returns).
func (s *Stream) Flush() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sse {
		return nil
	}
	return s.flush()
}
