package sse

import "net/http"

// Init makes s, a zero Stream, answer r on w, as New does: for a caller
// that holds the Stream in a value allocated per request anyway, which
// spares the Stream's own allocation.
func (s *Stream) Init(w http.ResponseWriter, r *http.Request) {
	s.w, s.ctx, s.canSSE = w, r.Context(), AcceptsSSE(accept(r.Header))
}
