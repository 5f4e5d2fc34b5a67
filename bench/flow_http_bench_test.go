package main

import "testing"

// BenchmarkFlowHTTP is the confirm scenario (a two-round flow) over
// loopback HTTP in one process, one flow at a time, in turn on 32
// connections (the harness's -concurrency), with the raw client:
// generator and server together, with the garbage collector running as
// it does under load. Unlike server's BenchmarkMRTRTwoRounds (in process,
// no sockets) it includes net/http's connection goroutine, whose stack
// the collector shrinks at every cycle when a round needs more than it
// keeps (see TestFlowStack). Under valgrind run it with GOGC on (the
// default): with GOGC=off no stack is ever shrunk.
func BenchmarkFlowHTTP(b *testing.B) {
	handlers, _, err := newHandlers()
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"baton", "floor"} {
		b.Run(name, func(b *testing.B) {
			u, err := listen(handlers[name])
			if err != nil {
				b.Fatal(err)
			}
			cs := make([]*rawClient, 32)
			for i := range cs {
				if cs[i], err = newRawClient(u, 8); err != nil {
					b.Fatal(err)
				}
				defer cs[i].close()
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := cs[i%len(cs)].confirmOp(); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
