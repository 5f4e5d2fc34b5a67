package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkServers calls every server's http.Handler in-process (no
// sockets) with the load generator's requests, one operation per
// iteration: echo is one tools/call, confirm is a whole flow (round 1,
// then round 2 with the answer and the state). Its point is allocations
// per operation (go test -bench . -benchmem -run '^$'); the time per
// operation is CPU on one goroutine, not throughput. Every iteration also
// counts the benchmark's own request and recorder (the floor's row is
// that baseline plus the floor's decoding). The bodies are the load
// generator's own bytes (metaJSON, load.go), not a test client's, so that
// these figures describe the requests the load runs send.
func BenchmarkServers(b *testing.B) {
	handlers, _, err := newHandlers()
	if err != nil {
		b.Fatal(err)
	}
	echoBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + metaJSON + `}}`)
	round1 := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{"id":42},` + metaJSON + `}}`)
	round2Head := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{"id":42},` +
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"`)
	round2Tail := []byte(`",` + metaJSON + `}}`)
	for _, name := range serverNames {
		h := handlers[name]
		b.Run(name+"/echo", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out := serveOnce(h, "echo", echoBody); !bytes.Contains(out, []byte(`"text":"hello"`)) {
					b.Fatalf("echo: %.300s", out)
				}
			}
		})
		b.Run(name+"/confirm", func(b *testing.B) {
			b.ReportAllocs()
			var body []byte
			for b.Loop() {
				out := serveOnce(h, "confirm", round1)
				state := stateIn(out)
				if state == nil {
					b.Fatalf("round 1: %.300s", out)
				}
				body = append(append(append(body[:0], round2Head...), state...), round2Tail...)
				if out := serveOnce(h, "confirm", body); !bytes.Contains(out, []byte(`"text":"confirmed"`)) {
					b.Fatalf("round 2: %.300s", out)
				}
			}
		})
	}
}

// serveOnce sends one tools/call for tool to h, with the load generator's
// headers, over loopback addresses, and returns the response body.
func serveOnce(h http.Handler, tool string, body []byte) []byte {
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header = http.Header{
		"Content-Type":         {"application/json"},
		"Accept":               {"application/json, text/event-stream"},
		"Mcp-Protocol-Version": {protocolVersion},
		"Mcp-Method":           {"tools/call"},
		"Mcp-Name":             {tool},
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Body.Bytes()
}
