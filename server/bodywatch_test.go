package server

import (
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// deadlineWriter records the read deadlines set through
// http.ResponseController.
type deadlineWriter struct {
	http.ResponseWriter
	mu  sync.Mutex
	set []time.Time
}

func (d *deadlineWriter) SetReadDeadline(t time.Time) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.set = append(d.set, t)
	return nil
}

func (d *deadlineWriter) deadlines() []time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]time.Time(nil), d.set...)
}

// watchHour is a timeout whose timer never fires within a test: the tests
// tick the watch by hand (sweep).
const watchHour = time.Hour

// TestBodyWatchCutsAfterItsTicks: a read is cut at the tick that makes the
// timeout certain (bodyWatchTicks+1 ticks after it began, ticks at least a
// tenth of the timeout apart), not before; a read begun later is cut later.
func TestBodyWatchCutsAfterItsTicks(t *testing.T) {
	var bw bodyWatch
	w1, w2 := &deadlineWriter{}, &deadlineWriter{}
	r1 := bw.start(w1, watchHour)
	for range 5 {
		bw.sweep()
	}
	r2 := bw.start(w2, watchHour)
	for i := range bodyWatchTicks - 5 {
		bw.sweep()
		if d := w1.deadlines(); len(d) != 0 {
			t.Fatalf("cut after %d ticks: %v", 5+i+1, d)
		}
	}
	bw.sweep() // bodyWatchTicks+1
	if d := w1.deadlines(); len(d) != 1 || !d[0].Equal(longAgo) {
		t.Fatalf("after %d ticks: deadlines %v; want one in the past", bodyWatchTicks+1, d)
	}
	if d := w2.deadlines(); len(d) != 0 {
		t.Fatalf("the later read was cut with the first: %v", d)
	}
	for range 5 {
		bw.sweep()
	}
	if d := w2.deadlines(); len(d) != 1 || !d[0].Equal(longAgo) {
		t.Fatalf("the later read: deadlines %v; want one in the past", d)
	}
	// Both reads failed: their deadlines stay in the past.
	bw.done(r1, false)
	bw.done(r2, false)
	if len(w1.deadlines()) != 1 || len(w2.deadlines()) != 1 {
		t.Fatalf("a failed read's deadline was cleared: %v %v", w1.deadlines(), w2.deadlines())
	}
	bw.stopForTest(t)
}

// TestBodyWatchClearsACutThatRaced: a body that ended just as the watch
// cut it has its deadline cleared again, so the connection's background
// read does not fail and cancel the request.
func TestBodyWatchClearsACutThatRaced(t *testing.T) {
	var bw bodyWatch
	w := &deadlineWriter{}
	r := bw.start(w, watchHour)
	for range bodyWatchTicks + 1 {
		bw.sweep()
	}
	bw.done(r, true)
	if d := w.deadlines(); len(d) != 2 || !d[0].Equal(longAgo) || !d[1].IsZero() {
		t.Fatalf("deadlines %v; want the cut, then cleared", d)
	}
	bw.stopForTest(t)
}

// TestBodyWatchIdle: a read done in time sets no deadline at all, and the
// watch's timer stops at its next tick once nothing is watched (no timer
// armed on an idle server); the next read arms it again.
func TestBodyWatchIdle(t *testing.T) {
	var bw bodyWatch
	w := &deadlineWriter{}
	for range 3 {
		r := bw.start(w, watchHour)
		bw.sweep()
		bw.done(r, true)
		bw.sweep()
		bw.mu.Lock()
		running, head := bw.running, bw.head
		bw.mu.Unlock()
		if running || head != nil {
			t.Fatalf("idle watch: running %v, head %v", running, head)
		}
	}
	if d := w.deadlines(); len(d) != 0 {
		t.Fatalf("deadlines %v; want none", d)
	}
	if bw.nfree != 1 {
		t.Fatalf("%d reads kept for reuse; want the one", bw.nfree)
	}
}

// TestBodyWatchUnsupported: a ResponseWriter that cannot set deadlines is
// read without a timeout, and its read leaves the watch when due.
func TestBodyWatchUnsupported(t *testing.T) {
	var bw bodyWatch
	r := bw.start(httptest.NewRecorder(), watchHour)
	for range bodyWatchTicks + 1 {
		bw.sweep()
	}
	if r.watched || r.cut {
		t.Fatalf("watched %v, cut %v; want neither", r.watched, r.cut)
	}
	bw.done(r, true)
	bw.stopForTest(t)
}

// TestBodyWatchFreeListBounded: the reads kept for reuse are bounded by
// bodyWatchFree, however many were in flight at once.
func TestBodyWatchFreeListBounded(t *testing.T) {
	var bw bodyWatch
	w := &deadlineWriter{}
	rs := make([]*bodyRead, bodyWatchFree+10)
	for i := range rs {
		rs[i] = bw.start(w, watchHour)
	}
	// Out of order, as reads end.
	for i := len(rs) - 1; i >= 0; i -= 2 {
		bw.done(rs[i], true)
	}
	for i := len(rs) - 2; i >= 0; i -= 2 {
		bw.done(rs[i], true)
	}
	if bw.head != nil || bw.tail != nil || bw.nfree != bodyWatchFree {
		t.Fatalf("head %v tail %v, %d kept; want an empty list and %d kept", bw.head, bw.tail, bw.nfree, bodyWatchFree)
	}
	bw.stopForTest(t)
}

// TestBodyWatchConcurrent runs reads, and ticks, at once (for -race); a
// read done before its ticks is never cut.
func TestBodyWatchConcurrent(t *testing.T) {
	var bw bodyWatch
	var wg sync.WaitGroup
	ws := make([]*deadlineWriter, 8)
	for i := range ws {
		ws[i] = &deadlineWriter{}
		wg.Go(func() {
			for range 200 {
				r := bw.start(ws[i], watchHour)
				bw.done(r, true)
			}
		})
	}
	wg.Go(func() {
		for range bodyWatchTicks {
			bw.sweep()
		}
	})
	wg.Wait()
	for i, w := range ws {
		if d := w.deadlines(); len(d) != 0 {
			t.Errorf("writer %d: deadlines %v; want none", i, d)
		}
	}
	bw.stopForTest(t)
}

// stopForTest checks that no read is left watched, and stops the timer.
func (bw *bodyWatch) stopForTest(t *testing.T) {
	t.Helper()
	bw.mu.Lock()
	defer bw.mu.Unlock()
	if bw.head != nil {
		t.Errorf("a read is still watched")
	}
	if bw.timer != nil {
		bw.timer.Stop()
	}
	bw.running = false
}

// TestBodyWatchTick: the tick is a tenth of the timeout rounded up, so
// bodyWatchTicks of them are never less than it, for any timeout.
func TestBodyWatchTick(t *testing.T) {
	for _, timeout := range []time.Duration{1, 9, 10, 35, 30 * time.Second, math.MaxInt64} {
		var bw bodyWatch
		r := bw.start(&deadlineWriter{}, timeout)
		bw.done(r, true)
		bw.timer.Stop()
		// tick*bodyWatchTicks >= timeout, and tick is the least such
		// (written so that nothing overflows).
		if ceil := (timeout-1)/bodyWatchTicks + 1; bw.tick != ceil {
			t.Errorf("timeout %v: tick %v, want %v", timeout, bw.tick, ceil)
		}
	}
}

// TestBodyWatchesSpread checks a server's watches: one connection's
// requests always take the same watch, consecutive ports spread over all
// of them, and an address too short to have a port still gets one.
func TestBodyWatchesSpread(t *testing.T) {
	var ws bodyWatches
	if ws.of("127.0.0.1:50001") != ws.of("127.0.0.1:50001") {
		t.Fatal("one connection's requests took two watches")
	}
	seen := map[*bodyWatch]bool{}
	for port := 50000; port < 50000+bodyWatchShards; port++ {
		seen[ws.of("127.0.0.1:"+strconv.Itoa(port))] = true
	}
	if len(seen) != bodyWatchShards {
		t.Fatalf("%d consecutive ports took %d watches; want all %d", bodyWatchShards, len(seen), bodyWatchShards)
	}
	for _, remote := range []string{"", "1", "[::1]:8"} {
		if ws.of(remote) == nil {
			t.Fatalf("no watch for %q", remote)
		}
	}
}
