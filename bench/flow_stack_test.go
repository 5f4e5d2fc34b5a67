package main

import (
	"net/http/httptest"
	"runtime"
	"testing"
)

// TestFlowStack is TestLegacyCallStack for the 2026-07-28 confirm flow:
// over HTTP each round runs on its connection's goroutine, whose stack
// net/http starts at 8 KiB. Round 1 (the handler asks, the state is
// sealed) and round 2 (the state opened and checked, the answer
// validated, the handler run, the result written) must each fit in it, so
// that after a runtime.GC, which shrinks the idle connection's stack back
// to 8 KiB when it had grown, the next round does not grow (copy) it
// again: a stack copy per connection per GC cycle, 1.5-2% of the flow's
// CPU in issue 23's over-HTTP profile before the rounds fit. The floor's
// two bare requests never move their stack.
func TestFlowStack(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's frames are larger")
	}
	handlers, _, err := newHandlers()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"baton", "floor"} {
		t.Run(name, func(t *testing.T) {
			moved := 0
			srv := httptest.NewServer(stackWatch{handlers[name], &moved})
			defer srv.Close()
			c, err := newRawClient(srv.URL+"/mcp", 1)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			for range 20 { // the connection's stack at its size
				if err := c.confirmOp(); err != nil {
					t.Fatal(err)
				}
			}
			const flows = 50
			var moved1, moved2 int
			for range flows {
				runtime.GC()
				moved = 0
				if err := c.call("confirm", `"arguments":{"id":42},`); err != nil {
					t.Fatal(err)
				}
				moved1 += moved
				state, err := c.state()
				if err != nil {
					t.Fatal(err)
				}
				runtime.GC()
				moved = 0
				if err := c.call("confirm", `"arguments":{"id":42},`+
					`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},`+
					`"requestState":"`+state+`",`); err != nil {
					t.Fatal(err)
				}
				if err := c.checkCheap("confirm", `"resultType":"complete"`, `"text":"confirmed"`); err != nil {
					t.Fatal(err)
				}
				moved2 += moved
			}
			t.Logf("the stack moved in %d of %d first rounds and %d of %d retries, each after a GC", moved1, flows, moved2, flows)
			for i, m := range []int{moved1, moved2} {
				if m > flows/10 {
					t.Errorf("round %d: the connection goroutine's stack moved in %d of %d requests, each after a GC: the round's path grew past 8 KiB of stack", i+1, m, flows)
				}
			}
		})
	}
}
