package sse

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unsafe"
)

// The ...Framed methods, which frame their events in buffers from Frames,
// write the bytes of the others, which allocate each frame, one Write per
// event, for small and large events and the final event; the buffers are
// reused across streams.
func TestFramesSameBytes(t *testing.T) {
	big := []byte(`{"x":"` + strings.Repeat("y", 5000) + `"}`)
	mid := []byte(`{"x":"` + strings.Repeat("z", 700) + `"}`)
	run := func(f *Frames) (string, int) {
		w := &countWriter{ResponseRecorder: httptest.NewRecorder()}
		s := New(w, sseRequest())
		_ = s.Send([]byte(`{"n":1}`))
		_ = s.SendID("a.1", mid)
		if f == nil {
			_ = s.SendIDPos("a", "2", big)
			_ = s.SendIDPos("a", "3", []byte(`{"n":3}`))
			s.FinishIDPosUnflushed(http.StatusOK, "a", "4", []byte(`{"n":4}`))
		} else {
			_ = s.SendIDPosFramed(f, "a", "2", big)
			_ = s.SendIDPosFramed(f, "a", "3", []byte(`{"n":3}`))
			s.FinishIDPosUnflushedFramed(f, http.StatusOK, "a", "4", []byte(`{"n":4}`))
		}
		return w.Body.String(), w.writes
	}
	want, wantWrites := run(nil)
	var f Frames
	for i := range 3 {
		got, writes := run(&f)
		if got != want || writes != wantWrites {
			t.Fatalf("run %d with Frames: %d writes %q, want %d %q", i, writes, got, wantWrites, want)
		}
	}
	b := f.p.Get(512)
	if len(*b) != 0 {
		t.Errorf("a buffer from Frames has length %d", len(*b))
	}
	f.p.Put(b, append(*b, bytes.Repeat([]byte("x"), maxKeptFrame+1)...), maxKeptFrame) // too large: not kept
	for range 10 {
		if c := f.p.Get(512); cap(*c) > maxKeptFrame {
			t.Fatal("Frames kept a buffer over maxKeptFrame")
		}
	}
}

// countWriter counts the Writes of a response.
type countWriter struct {
	*httptest.ResponseRecorder
	writes int
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.ResponseRecorder.Write(p)
}

func (c *countWriter) Flush() { c.ResponseRecorder.Flush() }

// A Stream stays 64 bytes: a modern request's allocation holds one
// (server's modernResponse) at the edge of its size class.
func TestStreamSize(t *testing.T) {
	if size := unsafe.Sizeof(Stream{}); size > 64 {
		t.Errorf("a Stream is %d bytes, over 64", size)
	}
}
