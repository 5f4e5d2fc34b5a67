package main

import "testing"

// BenchmarkLegacySessionCallHTTP is the session-call scenario over
// loopback HTTP in one process, one call at a time, in turn on 32
// sessions each with its connection (the harness's -concurrency):
// generator and server together, with the garbage collector running as
// it does under load. Unlike BenchmarkLegacySessionCall (in process, no
// sockets) it includes net/http's connection goroutine, whose stack the
// collector shrinks at every cycle when a call needs more than it keeps
// (see TestLegacyCallStack). Under valgrind run it with GOGC on
// (the default): with GOGC=off no stack is ever shrunk.
func BenchmarkLegacySessionCallHTTP(b *testing.B) {
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
			cs := make([]*legacyClient, 32)
			for i := range cs {
				if cs[i], err = newLegacyClient(u, 8); err != nil {
					b.Fatal(err)
				}
				defer cs[i].close()
				if err := cs[i].initialize(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := cs[i%len(cs)].sessionCallOp(); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
