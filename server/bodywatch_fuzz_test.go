package server

import (
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzBodyWatch drives a bodyWatch with an arbitrary sequence of starts,
// ends and ticks (one byte each: the low two bits pick the operation, the
// rest its arguments) and holds it, after every step, to a model of what
// it must have done: the reads it watches, oldest first, in a consistent
// list; a read cut exactly at the tick that makes it overdue (more than
// bodyWatchTicks ticks since it began), and only when its writer can set
// a deadline; a cut read that ends whole has its deadline cleared again;
// the timer armed exactly while a read is watched; the free list at most
// bodyWatchFree; the tick the least with bodyWatchTicks of them at least
// the timeout. remote is a RemoteAddr for bodyWatches.of, which must pick
// one of the watches, the same for the same address.
func FuzzBodyWatch(f *testing.F) {
	f.Add([]byte{0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5}, uint32(0), "127.0.0.1:50001")
	f.Add([]byte{0, 4, 0, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 9, 13}, uint32(7), "[::1]:8")
	f.Add([]byte{0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2}, uint32(1<<31), "")
	f.Add([]byte{3, 7, 11, 15, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, uint32(9), "x")
	f.Fuzz(runBodyWatchOps)
}

// runBodyWatchOps is FuzzBodyWatch's body (see there).
func runBodyWatchOps(t *testing.T, ops []byte, extra uint32, remote string) {
	var ws bodyWatches
	w := ws.of(remote)
	found := false
	for i := range ws {
		found = found || w == &ws[i].bodyWatch
	}
	if !found || ws.of(remote) != w {
		t.Fatalf("of(%q) = %p: not one watch of the server's, or not the same twice", remote, w)
	}

	// An hour or more: the timer never fires within an iteration, the
	// model ticks the watch by hand.
	timeout := watchHour + time.Duration(extra)
	bw := &bodyWatch{}
	defer func() {
		if bw.timer != nil {
			bw.timer.Stop()
		}
	}()

	type read struct {
		r     *bodyRead
		dw    *deadlineWriter // nil: the writer cannot set deadlines
		since uint64          // the tick it began; ^0 once out of the list
		cut   bool
		marks int // deadlines the watch should have set on dw
	}
	checkDeadlines := func(op byte, rd *read) {
		if rd.dw == nil {
			return
		}
		d := rd.dw.deadlines()
		if len(d) != rd.marks {
			t.Fatalf("after op %#x: %d deadlines set on a read, want %d: %v", op, len(d), rd.marks, d)
		}
		if len(d) > 0 && !d[0].Equal(longAgo) || len(d) > 1 && !d[1].IsZero() {
			t.Fatalf("after op %#x: deadlines %v, want the past, then none", op, d)
		}
	}
	var reads []*read // the reads not yet ended, in order of start
	var ticks uint64
	for _, op := range ops {
		switch op & 3 {
		case 0, 3: // start, on a writer that can (0) or cannot (3) set deadlines
			rd := &read{since: ticks}
			if op&3 == 0 {
				rd.dw = &deadlineWriter{}
				rd.r = bw.start(rd.dw, timeout)
			} else {
				rd.r = bw.start(httptest.NewRecorder(), timeout)
			}
			reads = append(reads, rd)
		case 1: // done: op>>3 picks a read not yet ended, bit 2 says ok
			if len(reads) == 0 {
				continue
			}
			k := int(op>>3) % len(reads)
			rd := reads[k]
			reads = append(reads[:k], reads[k+1:]...)
			ok := op&4 != 0
			bw.done(rd.r, ok)
			if ok && rd.cut {
				rd.marks++ // the deadline cleared again
			}
			checkDeadlines(op, rd)
		case 2: // a tick
			bw.sweep()
			ticks++
			bw.mu.Lock()
			idleArmed := bw.head == nil && bw.running
			bw.mu.Unlock()
			if idleArmed {
				t.Fatal("a tick found no read left and kept the timer armed")
			}
			for _, rd := range reads {
				if rd.since != ^uint64(0) && ticks-rd.since > bodyWatchTicks {
					rd.since = ^uint64(0) // out of the list
					if rd.dw != nil {
						rd.cut = true
						rd.marks++
					}
				}
			}
		}
		checkBodyWatch(t, bw, ticks, timeout)
		// The list is the reads not ended and not yet due, in order of start.
		n := bw.head
		for _, rd := range reads {
			if rd.since == ^uint64(0) {
				continue
			}
			if n != rd.r {
				t.Fatalf("after op %#x: the watched list differs from the model", op)
			}
			n = n.next
		}
		if n != nil {
			t.Fatalf("after op %#x: more reads watched than the model has", op)
		}
		for _, rd := range reads {
			checkDeadlines(op, rd)
			if rd.r.cut != rd.cut {
				t.Fatalf("after op %#x: read cut %v, want %v", op, rd.r.cut, rd.cut)
			}
		}
	}
}

// checkBodyWatch checks a bodyWatch's own invariants: a consistent
// doubly linked list in order of start, none of it due; the timer running
// exactly while the list is not empty (after a tick: a start arms it, and
// only a tick disarms it); the free list as long as nfree says, at most
// bodyWatchFree; the tick the least duration with bodyWatchTicks of them
// at least the timeout.
func checkBodyWatch(t *testing.T, bw *bodyWatch, ticks uint64, timeout time.Duration) {
	t.Helper()
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if bw.ticks != ticks {
		t.Fatalf("%d ticks counted, want %d", bw.ticks, ticks)
	}
	var prev *bodyRead
	for n := bw.head; n != nil; n = n.next {
		if n.prev != prev || !n.watched || n.w == nil {
			t.Fatal("the watched list is inconsistent")
		}
		if prev != nil && n.since < prev.since {
			t.Fatal("the watched list is not in order of start")
		}
		if bw.ticks-n.since > bodyWatchTicks {
			t.Fatalf("a read begun at tick %d is still watched at tick %d", n.since, bw.ticks)
		}
		prev = n
	}
	if bw.tail != prev {
		t.Fatal("the list's tail is not its last read")
	}
	if bw.head != nil && !bw.running {
		t.Fatal("reads are watched and the timer is not armed")
	}
	free := 0
	for n := bw.free; n != nil; n = n.next {
		if n.w != nil || n.watched {
			t.Fatal("a read on the free list is still in use")
		}
		free++
	}
	if free != bw.nfree || free > bodyWatchFree {
		t.Fatalf("%d reads on the free list, nfree %d, bound %d", free, bw.nfree, bodyWatchFree)
	}
	if bw.timer != nil {
		if ceil := (timeout-1)/bodyWatchTicks + 1; bw.tick != ceil {
			t.Fatalf("timeout %v: tick %v, want %v", timeout, bw.tick, ceil)
		}
	}
}
