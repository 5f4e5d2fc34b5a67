package sse

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// EndRetry ends an open stream with the retry field and marks it done;
// on a stream not open it writes nothing.
func TestEndRetry(t *testing.T) {
	s, w := streamWithEvent(t)
	s.EndRetry(500 * time.Millisecond)
	want := "id: a.1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\nretry: 500\n\n"
	if got := w.Body.String(); got != want {
		t.Errorf("stream %q, want %q", got, want)
	}
	if !s.Done() || s.Send([]byte(`{}`)) == nil {
		t.Error("the stream is not done after EndRetry")
	}

	w = httptest.NewRecorder()
	s = New(w, sseRequest())
	s.EndRetry(time.Second)
	if w.Body.Len() != 0 || w.Code != http.StatusOK || !s.Done() {
		t.Errorf("EndRetry on a stream not open wrote %q (HTTP %d), done %v", w.Body.String(), w.Code, s.Done())
	}
}

// streamWithEvent returns an SSE stream on a recorder that has sent one
// event, with id a.1.
func streamWithEvent(t *testing.T) (*Stream, *httptest.ResponseRecorder) {
	t.Helper()
	w := httptest.NewRecorder()
	s := New(w, sseRequest())
	if err := s.SendID("a.1", []byte(`{"jsonrpc":"2.0","method":"x"}`)); err != nil {
		t.Fatal(err)
	}
	return s, w
}

// sseRequest returns a POST that accepts an SSE stream.
func sseRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("Accept", "text/event-stream")
	return r
}
