// Package sse writes the response to one HTTP POST of the Streamable HTTP
// transport. A Stream stays a plain JSON response until something must be
// sent before the final message (a notification, or in the legacy era a
// server-to-client request); then it switches to Server-Sent Events and
// carries every message as it happens, the final response last.
package sse

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
)

// ErrClosed is returned once the final response has been written or the
// client has gone.
var ErrClosed = errors.New("the request's stream is closed")

// ErrNoSSE is returned by Send when the client did not accept
// text/event-stream, so nothing can precede the final response.
var ErrNoSSE = errors.New("the client does not accept text/event-stream")

// Stream is the response to one request. It is safe for concurrent use.
type Stream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	ctx    context.Context
	canSSE bool
	sse    bool
	done   bool
	header func(http.Header)
}

// New returns a stream answering r on w. Its context is r's.
func New(w http.ResponseWriter, r *http.Request) *Stream {
	return &Stream{w: w, ctx: r.Context(), canSSE: AcceptsSSE(accept(r.Header))}
}

// accept is h.Get("Accept"), without canonicalizing the key (it is
// canonical) on every request.
func accept(h http.Header) string {
	if v := h["Accept"]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// flush sends what was written so far, as http.ResponseController's Flush
// does: a writer's FlushError, else its Flush. A writer that has neither
// (a wrapper that only unwraps) gets a ResponseController, made on the
// first flush; net/http's own writer flushes without one, which was an
// allocation for every stream that flushed (issue 23). s.mu is held.
func (s *Stream) flush() error {
	switch f := s.w.(type) {
	case interface{ FlushError() error }:
		return f.FlushError()
	case http.Flusher:
		f.Flush()
		return nil
	}
	if s.rc == nil {
		s.rc = http.NewResponseController(s.w)
	}
	return s.rc.Flush()
}

// SetHeader registers a function that adds headers to the response when it
// is first written (for example Mcp-Session-Id).
func (s *Stream) SetHeader(f func(http.Header)) { s.header = f }

// AcceptsSSE reports whether an Accept header admits text/event-stream.
func AcceptsSSE(accept string) bool {
	// The header the clients send (the transport's own example), told by
	// one comparison: the search below was about 230 instructions of
	// every call in a 2025-11-25 session (issue 23).
	if accept == "application/json, text/event-stream" {
		return true
	}
	if strings.Contains(accept, "text/event-stream") {
		return true // the usual "application/json, text/event-stream"
	}
	for _, part := range strings.Split(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err == nil && (mt == "text/event-stream" || mt == "*/*" || mt == "text/*") {
			return true
		}
	}
	return false
}

// CanSend reports whether messages may precede the final response.
func (s *Stream) CanSend() bool { return s.canSSE }

func (s *Stream) start() {
	h := s.w.Header()
	if s.header != nil {
		s.header(h)
	}
	h["Content-Type"] = contentSSE
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = noBuffering
	s.w.WriteHeader(http.StatusOK)
	s.sse = true
}

// Open switches to SSE at once (for streams that carry only events, such
// as a listen or GET stream).
func (s *Stream) Open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sse && !s.done {
		s.start()
		_ = s.flush()
	}
}

func (s *Stream) event(data []byte) error { return s.eventID(nil, "", "", false, data) }

// eventID writes one event and flushes it (see frame for id and pos),
// framed in a buffer from f when f is not nil.
func (s *Stream) eventID(f *Frames, id, pos string, withPos bool, data []byte) error {
	if err := s.writeFrame(f, id, pos, withPos, data); err != nil {
		return err
	}
	return s.flush()
}

// frame returns one event carrying data, with an id line when id is not
// empty: id, or id "." pos with withPos (an event id of a stream and a
// position in it, written without joining them into a string first: that
// was an allocation per event; issue 23).
func frame(id, pos string, withPos bool, data []byte) []byte {
	return appendFrame(make([]byte, 0, len(data)+len(id)+len(pos)+33), id, pos, withPos, data)
}

// appendFrame appends frame's event to buf.
func appendFrame(buf []byte, id, pos string, withPos bool, data []byte) []byte {
	if id != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, id...)
		if withPos {
			buf = append(buf, '.')
			buf = append(buf, pos...)
		}
		buf = append(buf, '\n')
	}
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

// Send writes one message as an SSE event, switching to SSE first. It
// fails with ErrNoSSE when the client does not accept SSE and with
// ErrClosed after Finish or once the client has gone.
func (s *Stream) Send(msg []byte) error {
	if !s.canSSE {
		return ErrNoSSE
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.ctx.Err() != nil {
		return ErrClosed
	}
	if !s.sse {
		s.start()
	}
	if err := s.event(msg); err != nil {
		return errors.Join(ErrClosed, err)
	}
	return nil
}

// SendID is Send with an SSE event id (the id a client resumes from with
// Last-Event-ID); an empty id writes none.
func (s *Stream) SendID(id string, msg []byte) error { return s.send(nil, id, "", false, msg) }

// SendIDPos is SendID with the event id stream "." pos (none when stream
// is empty).
func (s *Stream) SendIDPos(stream, pos string, msg []byte) error {
	return s.send(nil, stream, pos, true, msg)
}

// SendIDPosFramed is SendIDPos framing the event in a buffer from f (see
// Frames).
func (s *Stream) SendIDPosFramed(f *Frames, stream, pos string, msg []byte) error {
	return s.send(f, stream, pos, true, msg)
}

// send is SendID and SendIDPos (see frame).
func (s *Stream) send(f *Frames, id, pos string, withPos bool, msg []byte) error {
	if !s.canSSE {
		return ErrNoSSE
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done || s.ctx.Err() != nil {
		return ErrClosed
	}
	if !s.sse {
		s.start()
	}
	if err := s.eventID(f, id, pos, withPos, msg); err != nil {
		return errors.Join(ErrClosed, err)
	}
	return nil
}

// FinishID is Finish whose final event, if the stream is SSE, carries
// id.
func (s *Stream) FinishID(status int, id string, msg []byte) {
	s.mu.Lock()
	if s.sse && !s.done {
		s.done = true
		_ = s.eventID(nil, id, "", false, msg)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.finish(status, msg)
}

// Streaming reports whether the stream switched to SSE.
func (s *Stream) Streaming() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sse
}

// KeepAlive writes an SSE comment if the stream is already SSE, so proxies
// and clients keep a quiet stream open. It is a no-op otherwise.
func (s *Stream) KeepAlive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sse || s.done {
		return nil
	}
	if _, err := io.WriteString(s.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	return s.flush()
}

var (
	contentJSON = []string{"application/json"}
	contentSSE  = []string{"text/event-stream"}
	noCache     = []string{"no-cache"}
	noBuffering = []string{"no"}
)

// FinishResult writes a JSON-RPC result message made of prefix, result and
// suffix (see rpcwire.ResultPrefix), without joining them first.
func (s *Stream) FinishResult(prefix, result, suffix []byte) {
	s.finish(http.StatusOK, prefix, result, suffix)
}

// Finish writes the final message: as the last SSE event, or as a JSON
// body with the given status when nothing was streamed. Later calls do
// nothing.
func (s *Stream) Finish(status int, msg []byte) {
	s.finish(status, msg)
}

// finish writes the final message, given in parts.
func (s *Stream) finish(status int, parts ...[]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if s.sse {
		var msg []byte
		for _, p := range parts {
			msg = append(msg, p...)
		}
		_ = s.event(msg)
		return
	}
	h := s.w.Header()
	if s.header != nil {
		s.header(h)
	}
	h["Content-Type"] = contentJSON
	s.w.WriteHeader(status)
	for _, p := range parts {
		_, _ = s.w.Write(p)
	}
}

// Abandon marks the stream finished without writing anything (the request
// was cancelled). Nothing more is sent.
func (s *Stream) Abandon() {
	s.mu.Lock()
	s.done = true
	s.mu.Unlock()
}

// Done reports whether the final response was written or abandoned.
func (s *Stream) Done() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.done
}

// Kept returns a stream with no client: one that has ended already, for
// a call whose events are only kept (its client reads them from the
// event store, on a stream resumed with Last-Event-ID).
func Kept() *Stream { return &Stream{canSSE: true, sse: true, done: true} }
