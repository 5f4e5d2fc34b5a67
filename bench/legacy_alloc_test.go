package main

import (
	"bufio"
	"bytes"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// BenchmarkLegacySessionCall calls each 2025-11-25 server's http.Handler
// in process (no sockets) with the session-call scenario's request: one
// tools/call echo in a session opened before the loop. Read it for
// allocations per call and for a CPU profile without the system calls
// (go test -run '^$' -bench LegacySessionCall -benchmem -cpuprofile cpu.out .).
func BenchmarkLegacySessionCall(b *testing.B) {
	handlers, err := newLegacyHandlers()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range legacyServerNames {
		h := handlers[legacyKey(name)]
		b.Run(name, func(b *testing.B) {
			sid := openLegacySession(b, h)
			b.ReportAllocs()
			id := 1
			var body []byte
			for b.Loop() {
				id++
				body = append(append(append(body[:0], `{"jsonrpc":"2.0","id":`...), strconv.Itoa(id)...),
					`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`...)
				if w := serveLegacyOnce(h, sid, body); w.Code != 200 || !bytes.Contains(w.Body.Bytes(), []byte(`"text":"hello"`)) {
					b.Fatalf("echo: %d %.300s", w.Code, w.Body.Bytes())
				}
			}
		})
	}
}

// serveLegacyOnce POSTs body to h in session sid ("" for none) with the
// load generator's headers, over loopback addresses.
func serveLegacyOnce(h http.Handler, sid string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header = http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
	if sid != "" {
		req.Header["Mcp-Session-Id"] = []string{sid}
		req.Header["Mcp-Protocol-Version"] = []string{legacyProtocol}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(connRecorder{w}, req)
	return w
}

// openLegacySession opens a 2025-11-25 session on h in process
// (initialize with the elicitation capability, then
// notifications/initialized) and returns its id.
func openLegacySession(tb testing.TB, h http.Handler) string {
	tb.Helper()
	w := serveLegacyOnce(h, "", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyProtocol+
		`","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"baton-bench","version":"1.0.0"}}}`))
	sid := w.Header().Get("Mcp-Session-Id")
	if w.Code != 200 || sid == "" {
		tb.Fatalf("initialize: %d %s", w.Code, w.Body.Bytes())
	}
	if w := serveLegacyOnce(h, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); w.Code != 202 {
		tb.Fatalf("notifications/initialized: %d %s", w.Code, w.Body.Bytes())
	}
	return sid
}

// connRecorder is a ResponseRecorder that says it can hand over its
// connection, as net/http's HTTP/1.x ResponseWriter does, so that Baton
// serves the call as it does over a socket (on the request's goroutine);
// it has no connection to hand over.
type connRecorder struct{ *httptest.ResponseRecorder }

func (connRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, errors.New("a recorder has no connection")
}

// BenchmarkLegacySessionElicit runs the session-elicit round trip over
// loopback HTTP against each 2025-11-25 server, one at a time: the
// generator's client and the server share the process, so read its
// allocations with a memory profile focused on the server
// (-memprofile m.out; go tool pprof -focus ServeHTTP m.out).
func BenchmarkLegacySessionElicit(b *testing.B) {
	handlers, err := newLegacyHandlers()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range legacyServerNames {
		b.Run(name, func(b *testing.B) {
			u, err := listen(handlers[legacyKey(name)])
			if err != nil {
				b.Fatal(err)
			}
			c, err := newLegacyClient(u, 8)
			if err != nil {
				b.Fatal(err)
			}
			defer c.close()
			if err := c.initialize(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.sessionElicitOp(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
