package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/legacy"
)

// BenchmarkLegacyElicitInProcess runs Baton's session-elicit round trip
// against its http.Handler in process (no sockets, no client in the
// profile but this loop's few lines): tools/call confirm is served on a
// goroutine of its own (one for all the calls) with a streaming ResponseWriter; the loop reads the
// elicitation/create event off that stream, serves the answer POST (202),
// and waits for the call's result on the stream. Read it for instructions
// (valgrind) and allocations per round trip (-benchmem).
func BenchmarkLegacyElicitInProcess(b *testing.B) {
	h, err := newBatonLegacy()
	if err != nil {
		b.Fatal(err)
	}
	benchLegacyElicit(b, h, legacyOptionsChanged)
}

// BenchmarkLegacyElicitInProcessLimitOff is BenchmarkLegacyElicitInProcess
// with legacy.Options.MaxAnswersPerSecond off (-1): beside the default
// one, what the answers' rate limit costs a round trip whose answer the
// server is waiting for (it is matched first and takes no token).
func BenchmarkLegacyElicitInProcessLimitOff(b *testing.B) {
	h, err := newBatonWith(legacy.New(&legacy.Options{MaxSessions: 1 << 20, MaxSessionsPerClient: 1 << 20, MaxAnswersPerSecond: -1}))
	if err != nil {
		b.Fatal(err)
	}
	benchLegacyElicit(b, h, "legacy.Options{MaxSessions: 1<<20, MaxSessionsPerClient: 1<<20, MaxAnswersPerSecond: -1 (off)}; everything else at the defaults")
}

// benchLegacyElicit runs the round trip against h; changed says which of
// its options differ from the defaults (printed beside the figures).
func benchLegacyElicit(b *testing.B, h http.Handler, changed string) {
	b.Logf("Baton's options changed from the defaults: %s", changed)
	sid := openLegacySession(b, h)
	st := &streamWriter{flushed: make(chan struct{}, 1), header: http.Header{}}
	// The calls are served on one goroutine, as net/http serves a
	// connection's requests, so that its stack is grown once.
	calls, done := make(chan *http.Request), make(chan struct{})
	defer close(calls)
	go func() {
		for req := range calls {
			h.ServeHTTP(st, req)
			done <- struct{}{}
		}
	}()
	var call, answer []byte
	id := 1
	b.ReportAllocs()
	for b.Loop() {
		id++
		call = append(append(append(call[:0], `{"jsonrpc":"2.0","id":`...), strconv.Itoa(id)...),
			`,"method":"tools/call","params":{"name":"confirm","arguments":{"id":42}}}`...)
		st.reset()
		calls <- legacyRequest(sid, call)
		var ev []byte
		for ev == nil {
			<-st.flushed
			ev = st.event()
		}
		eid, err := elicitID(ev, false)
		if err != nil {
			b.Fatal(err)
		}
		answer = append(append(append(answer[:0], `{"jsonrpc":"2.0","id":`...), eid...), `,"result":{"action":"accept","content":{"confirm":true}}}`...)
		if w := serveLegacyOnce(h, sid, answer); w.Code != 202 {
			b.Fatalf("answer: %d %s", w.Code, w.Body.Bytes())
		}
		<-done
		if err := checkResult(st.lastEvent(), id, confirmText, false); err != nil {
			b.Fatal(err)
		}
	}
}

// legacyRequest is serveLegacyOnce's request.
func legacyRequest(sid string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Session-Id":       {sid},
		"Mcp-Protocol-Version": {legacyProtocol},
	}
	return req
}

// streamWriter is a ResponseWriter for a call served on another
// goroutine: each Flush signals flushed, and the body is read under mu.
// It says it can hand over its connection (connRecorder).
type streamWriter struct {
	connRecorder
	mu      sync.Mutex
	header  http.Header
	body    []byte
	code    int
	flushed chan struct{}
}

func (s *streamWriter) reset() {
	s.mu.Lock()
	clear(s.header)
	s.body, s.code = s.body[:0], 0
	s.mu.Unlock()
}

func (s *streamWriter) Header() http.Header { return s.header }

func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	if s.code == 0 {
		s.code = code
	}
	s.mu.Unlock()
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	if s.code == 0 {
		s.code = 200
	}
	s.body = append(s.body, p...)
	s.mu.Unlock()
	return len(p), nil
}

func (s *streamWriter) Flush() {
	select {
	case s.flushed <- struct{}{}:
	default:
	}
}

// event returns a copy of the stream's first event's data, or nil while
// there is none.
func (s *streamWriter) event() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, rest, ok := bytes.Cut(s.body, []byte("data: "))
	if !ok {
		return nil
	}
	data, _, ok := bytes.Cut(rest, []byte("\n\n"))
	if !ok {
		return nil
	}
	return append([]byte(nil), data...)
}

// lastEvent returns the data of the stream's last event (the call is over).
func (s *streamWriter) lastEvent() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := bytes.LastIndex(s.body, []byte("data: "))
	if i < 0 {
		return s.body
	}
	data, _, _ := bytes.Cut(s.body[i+len("data: "):], []byte("\n\n"))
	return data
}
