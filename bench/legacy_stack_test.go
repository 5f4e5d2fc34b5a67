package main

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"unsafe"
)

// stackWatch is a handler that reports, for each request, whether the
// goroutine's stack moved (was copied to a larger one) while h served it.
type stackWatch struct {
	h     http.Handler
	moved *int
}

func (z stackWatch) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var x uintptr
	before := uintptr(unsafe.Pointer(&x))
	z.h.ServeHTTP(w, r)
	if uintptr(unsafe.Pointer(&x)) != before {
		*z.moved++
	}
}

// TestLegacyCallStack holds the session-call scenario's call to what
// issue 23 found: over HTTP a call runs on its connection's goroutine,
// whose stack net/http starts at 8 KiB. A call that needs more grows it
// to 16 KiB; the garbage collector then finds the idle connection using
// less than a quarter of that and shrinks it back at every cycle, and the
// next call grows it again: a copy of the stack per connection per cycle,
// about 1 µs per call in the over-HTTP profile (the floor's call never
// grows its stack). So after each runtime.GC here the next call must not
// move its goroutine's stack. It fails when the frames between net/http
// and the echo tool's handler (server.callTool, the legacy session's
// serveRequest, run, bridge; see prepareToolCall) grow by about 1 KiB.
func TestLegacyCallStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's frames are larger")
	}
	handlers, err := newLegacyHandlers()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"baton", "floor"} {
		t.Run(name, func(t *testing.T) {
			moved := 0
			srv := httptest.NewServer(stackWatch{handlers[legacyKey(name)], &moved})
			defer srv.Close()
			c, err := newLegacyClient(srv.URL+"/mcp", 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			if err := c.initialize(); err != nil {
				t.Fatal(err)
			}
			for range 20 { // the connection's stack at its size
				if err := c.sessionCallOp(); err != nil {
					t.Fatal(err)
				}
			}
			moved = 0
			const calls = 50
			for range calls {
				runtime.GC()
				if err := c.sessionCallOp(); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("the stack moved in %d of %d calls, each after a GC", moved, calls)
			if moved > calls/10 {
				t.Errorf("the connection goroutine's stack moved in %d of %d calls, each after a GC: the call path grew past 8 KiB of stack", moved, calls)
			}
		})
	}
}
