package sse

import (
	"strconv"
	"time"
)

// EndRetry ends an open event stream before its response: it sends the
// retry field (how long the client should wait before it reconnects) and
// marks the stream done. A client that received an event id resumes the
// stream with Last-Event-ID. On a stream not open (no event sent yet) it
// only marks the stream done.
func (s *Stream) EndRetry(retry time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if !s.sse {
		return
	}
	_, _ = s.w.Write([]byte("retry: " + strconv.FormatInt(retry.Milliseconds(), 10) + "\n\n"))
	_ = s.flush()
}
