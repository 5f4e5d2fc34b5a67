package server

import (
	"net/http"
	"sync"
	"time"
)

// bodyWatchTicks is how many ticks of a bodyWatch make its timeout: a
// stalled body is cut between the timeout and a tenth of it later.
const bodyWatchTicks = 10

// bodyWatchFree bounds a bodyWatch's free list: the reads kept for reuse
// once the bodies in flight at a peak have been read.
const bodyWatchFree = 64

// bodyWatchShards is how many bodyWatches a server keeps (bodyWatches).
const bodyWatchShards = 8

// bodyWatches is a server's body-read watches. A read takes the watch its
// connection's remote port picks (of), so reads on many cores spread over
// eight mutexes instead of all taking one, as the per-P runtime timers
// this replaced did not either. Each watch is padded so that no two locks
// share a cache line. The zero value is ready to use.
type bodyWatches [bodyWatchShards]struct {
	bodyWatch
	_ [64]byte
}

// of returns the watch for a request from remote (its RemoteAddr): the
// same for every request on one connection, spread across connections by
// the last two characters (the port's last digits, for an address of
// host:port).
func (ws *bodyWatches) of(remote string) *bodyWatch {
	var h uint
	if n := len(remote); n >= 2 {
		h = uint(remote[n-1]) + 10*uint(remote[n-2])
	}
	return &ws[h%bodyWatchShards].bodyWatch
}

// bodyWatch is a server's watch over the request bodies being read
// (readBody): one timer for all of them, ticking every tenth of the
// timeout while any body is in flight and stopped when none is (no
// goroutine, no armed timer, on an idle server). A body still being read
// after bodyWatchTicks+1 ticks has been read for at least the timeout (the
// ticks come at least a tenth of it apart, never sooner) and is cut: its
// connection's read deadline is moved into the past
// (http.ResponseController), which fails the pending read at once.
//
// It replaced a time.Timer per request, armed (Reset) before the body and
// stopped after it: about 800 instructions of a plain call in process
// (valgrind, BenchmarkToolsCall, issue 23, round 8), and the stopped
// timers' removal from the runtime's heap besides; watching a read costs
// two locks, uncontended on one core and spread over a server's eight
// watches on many (bodyWatches), and a list link. A timer, not a deadline computed
// from the clock, because an absolute deadline would need the wall clock,
// and the server reads only its injectable one.
//
// The zero value is ready to use.
type bodyWatch struct {
	mu      sync.Mutex
	tick    time.Duration
	timer   *time.Timer // made at the first read
	running bool        // the timer is armed (some read is watched)
	ticks   uint64      // ticks so far

	head, tail *bodyRead // the reads being watched, oldest first
	free       *bodyRead // reads done, for reuse (at most bodyWatchFree)
	nfree      int
}

// bodyRead is one body being read under a bodyWatch.
type bodyRead struct {
	w          http.ResponseWriter
	since      uint64 // the watch's tick count when the read began
	prev, next *bodyRead
	watched    bool // in the watch's list
	cut        bool // the watch moved the read deadline into the past
}

// start watches a read of a body for w, which is cut once it has taken
// timeout (and at most a tenth more).
func (bw *bodyWatch) start(w http.ResponseWriter, timeout time.Duration) *bodyRead {
	bw.mu.Lock()
	n := bw.free
	if n != nil {
		bw.free = n.next
		bw.nfree--
		n.next = nil
	} else {
		n = new(bodyRead)
	}
	n.w, n.since, n.cut, n.watched = w, bw.ticks, false, true
	n.prev = bw.tail
	if bw.tail != nil {
		bw.tail.next = n
	} else {
		bw.head = n
	}
	bw.tail = n
	if !bw.running {
		bw.running = true
		if bw.timer == nil {
			// Rounded up: bodyWatchTicks ticks are never less than timeout.
			bw.tick = timeout / bodyWatchTicks
			if timeout%bodyWatchTicks != 0 {
				bw.tick++
			}
			bw.timer = time.AfterFunc(bw.tick, bw.sweep)
		} else {
			bw.timer.Reset(bw.tick)
		}
	}
	bw.mu.Unlock()
	return n
}

// done ends the watch of n; ok says the whole body was read. If the watch
// cut it as the body ended, the read deadline is cleared again, or the
// connection's background read would fail and cancel the request. After a
// failed read the deadline stays in the past: the connection is closed
// after the reply, and net/http's own draining of the unread body cannot
// wait on the peer.
func (bw *bodyWatch) done(n *bodyRead, ok bool) {
	bw.mu.Lock()
	w, cut := n.w, n.cut
	if n.watched {
		bw.unlink(n)
	}
	n.w = nil
	if bw.nfree < bodyWatchFree {
		n.next = bw.free
		bw.free = n
		bw.nfree++
	}
	bw.mu.Unlock()
	if ok && cut {
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	}
}

// unlink takes n out of the list of reads watched. bw.mu is held.
func (bw *bodyWatch) unlink(n *bodyRead) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		bw.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		bw.tail = n.prev
	}
	n.prev, n.next, n.watched = nil, nil, false
}

// sweep is the timer's tick: it cuts the reads that have taken the
// timeout, and arms the timer again while any read is watched. The list
// is in order of start, so it stops at the first read not yet due.
func (bw *bodyWatch) sweep() {
	bw.mu.Lock()
	defer bw.mu.Unlock()
	bw.ticks++
	for n := bw.head; n != nil && bw.ticks-n.since > bodyWatchTicks; n = bw.head {
		bw.unlink(n)
		// A ResponseWriter that cannot set deadlines (http.ErrNotSupported)
		// reads without a timeout.
		n.cut = http.NewResponseController(n.w).SetReadDeadline(longAgo) == nil
	}
	if bw.head == nil {
		bw.running = false
		return
	}
	bw.timer.Reset(bw.tick)
}

// longAgo is a read deadline in the past: it fails a pending read at once.
var longAgo = time.Unix(1, 0)
