package sse

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FinishIDUnflushed writes the final event as FinishID does, and it
// reaches the client, with the end of the response, when the handler
// returns; on a stream not SSE yet it writes the JSON body.
func TestFinishIDUnflushed(t *testing.T) {
	s, w := streamWithEvent(t)
	s.FinishIDUnflushed(http.StatusOK, "a.2", []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	want := "id: a.1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\n" +
		"id: a.2\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	if got := w.Body.String(); got != want {
		t.Errorf("stream %q, want %q", got, want)
	}
	if !s.Done() || s.Send([]byte(`{}`)) == nil {
		t.Error("the stream is not done after FinishIDUnflushed")
	}

	w = httptest.NewRecorder()
	s = New(w, sseRequest())
	s.FinishIDUnflushed(http.StatusAccepted, "a.3", []byte(`{"x":1}`))
	if w.Code != http.StatusAccepted || w.Body.String() != `{"x":1}` || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("not SSE: HTTP %d %q %q, want 202 and the JSON body", w.Code, w.Header().Get("Content-Type"), w.Body.String())
	}

	// Over a connection: the client reads the final event and the end
	// of the body once the handler returns.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := New(w, r)
		_ = s.SendID("b.1", []byte(`{"n":1}`))
		s.FinishIDUnflushed(http.StatusOK, "b.2", []byte(`{"n":2}`))
	}))
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader("{}"))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(bufio.NewReader(resp.Body))
	if err != nil || !strings.HasSuffix(string(body), "id: b.2\nevent: message\ndata: {\"n\":2}\n\n") {
		t.Errorf("over HTTP: %q, %v; want the final event and a complete body", body, err)
	}
}

// The event id in two parts (SendIDPos, FinishIDPosUnflushed) is written
// as the joined id would be: stream "." pos (even with an empty pos),
// none without a stream.
func TestEventIDPos(t *testing.T) {
	w := httptest.NewRecorder()
	s := New(w, sseRequest())
	for _, e := range []struct{ stream, pos string }{{"a", "1"}, {"b", ""}, {"", ""}, {"", "9"}} {
		if err := s.SendIDPos(e.stream, e.pos, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	s.FinishIDPosUnflushed(http.StatusOK, "a", "2", []byte(`{"n":2}`))
	want := "id: a.1\nevent: message\ndata: {}\n\n" +
		"id: b.\nevent: message\ndata: {}\n\n" +
		"event: message\ndata: {}\n\n" +
		"event: message\ndata: {}\n\n" +
		"id: a.2\nevent: message\ndata: {\"n\":2}\n\n"
	if got := w.Body.String(); got != want {
		t.Errorf("stream %q, want %q", got, want)
	}
}

// flushOnly is a writer that flushes only through Unwrap, as middleware
// wrappers do: flush reaches the writer under it.
type flushOnly struct{ http.ResponseWriter }

func (f flushOnly) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// countFlushes counts Flush calls and has no FlushError.
type countFlushes struct {
	*httptest.ResponseRecorder
	n int
}

func (c *countFlushes) Flush() { c.n++; c.ResponseRecorder.Flush() }

// flush reaches FlushError, Flush, or (through Unwrap) the writer under a
// wrapper, as http.ResponseController's Flush does.
func TestFlushWriters(t *testing.T) {
	c := &countFlushes{ResponseRecorder: httptest.NewRecorder()}
	for _, w := range []http.ResponseWriter{c, flushOnly{c}} {
		s := New(w, sseRequest())
		before := c.n
		if err := s.SendID("a.1", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if c.n != before+1 {
			t.Errorf("%T: %d flushes, want 1", w, c.n-before)
		}
	}
	var plain struct{ http.ResponseWriter } // neither flushes nor unwraps
	plain.ResponseWriter = httptest.NewRecorder()
	s := New(plain, sseRequest())
	if err := s.SendID("a.1", []byte(`{}`)); err == nil {
		t.Error("a writer that cannot flush: Send reported no error")
	}
}
