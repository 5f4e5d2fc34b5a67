package legacy

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestMemoryEventStoreEvictsLeastRecentlyWritten fills a memoryEventStore
// to its bound and checks that one more stream drops the stream written
// least recently (not the one opened first, when that one was written
// since), that the count stays at the bound, and that the list the store
// evicts by holds every stream, in the order they were written.
func TestMemoryEventStoreEvictsLeastRecentlyWritten(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	m := newMemoryEventStore(time.Hour)
	m.now = func() time.Time { now = now.Add(time.Millisecond); return now }
	for i := range maxMemoryStreams {
		if err := m.OpenStream(ctx, "s", strconv.Itoa(i), StreamMeta{Instance: "i"}); err != nil {
			t.Fatal(err)
		}
	}
	// Stream 0, opened first, is written last: stream 1 is now the
	// least recently written.
	if _, err := m.Append(ctx, "s", "0", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := m.OpenStream(ctx, "s", "new", StreamMeta{Instance: "i"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.StreamMeta(ctx, "s", "1"); !errors.Is(err, ErrNotFound) {
		t.Errorf("stream 1 (written least recently) was kept: %v", err)
	}
	for _, k := range []string{"0", "2", "new"} {
		if _, err := m.StreamMeta(ctx, "s", k); err != nil {
			t.Errorf("stream %s was dropped: %v", k, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.streams) != maxMemoryStreams {
		t.Errorf("%d streams kept, want %d", len(m.streams), maxMemoryStreams)
	}
	n := 0
	var last time.Time
	for s := m.oldest; s != nil; s = s.newer {
		if m.streams[s.key] != s || s.touched.Before(last) {
			t.Fatalf("the list is out of order or holds a dropped stream at %s", s.key)
		}
		last = s.touched
		n++
	}
	if n != len(m.streams) || m.newest == nil || m.newest.key != (streamKey{"s", "new"}) {
		t.Errorf("the list holds %d streams (want %d), newest %v", n, len(m.streams), m.newest)
	}
}

// TestMemoryEventStoreSweepUnlinks checks that streams dropped by the
// sweep of expired streams leave the eviction list too.
func TestMemoryEventStoreSweepUnlinks(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_000_000, 0)
	m := newMemoryEventStore(time.Minute)
	m.now = func() time.Time { return now }
	for i := range 100 {
		if err := m.OpenStream(ctx, "s", strconv.Itoa(i), StreamMeta{Instance: "i"}); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Minute) // every stream expired
	for i := range 100 {           // the sweep runs as the count grows
		if err := m.OpenStream(ctx, "t", strconv.Itoa(i), StreamMeta{Instance: "i"}); err != nil {
			t.Fatal(err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for s := m.oldest; s != nil; s = s.newer {
		if m.streams[s.key] != s {
			t.Fatalf("the list holds a dropped stream: %s", s.key)
		}
		n++
	}
	if n != len(m.streams) || len(m.streams) >= 200 {
		t.Errorf("%d streams in the list, %d in the store (the expired ones should be swept)", n, len(m.streams))
	}
}

// appendTo appends to the stream openStreamAppendKept returned, as
// appendKept does by its key, and refuses it once it is dropped or
// expired, as appendKept does.
func TestMemoryEventStoreAppendTo(t *testing.T) {
	now := time.Unix(1000, 0)
	m := newMemoryEventStore(time.Minute)
	m.now = func() time.Time { return now }
	ctx := context.Background()
	pos, s := m.openStreamAppendKept("sid", "s1", StreamMeta{}, []byte(`{"a":1}`))
	if pos != "1" || s == nil {
		t.Fatalf("openStreamAppendKept: %q %v", pos, s)
	}
	if pos, err := m.appendTo(s, []byte(`{"b":2}`), true); pos != "2" || err != nil {
		t.Fatalf("appendTo: %q %v", pos, err)
	}
	evs, ended, err := m.Read(ctx, "sid", "s1", "", 0)
	if err != nil || !ended || len(evs) != 2 || string(evs[1].Msg) != `{"b":2}` {
		t.Fatalf("Read: %v %v %v", evs, ended, err)
	}
	_, exp := m.openStreamAppendKept("sid", "s2", StreamMeta{}, []byte(`{}`))
	now = now.Add(2 * time.Minute)
	if _, err := m.appendTo(exp, []byte(`{}`), false); err != ErrNotFound {
		t.Errorf("appendTo an expired stream: %v, want ErrNotFound", err)
	}
	_, dropped := m.openStreamAppendKept("sid", "s3", StreamMeta{}, []byte(`{}`))
	m.mu.Lock()
	m.drop(dropped)
	m.mu.Unlock()
	if _, err := m.appendTo(dropped, []byte(`{}`), false); err != ErrNotFound {
		t.Errorf("appendTo a dropped stream: %v, want ErrNotFound", err)
	}
	// A stream opened again under the same key is another stream: the
	// dropped one stays gone.
	_, first := m.openStreamAppendKept("sid", "s4", StreamMeta{}, []byte(`{}`))
	_, again := m.openStreamAppendKept("sid", "s4", StreamMeta{}, []byte(`{}`))
	if _, err := m.appendTo(first, []byte(`{}`), false); err != ErrNotFound {
		t.Errorf("appendTo a stream opened again: %v, want ErrNotFound", err)
	}
	if pos, err := m.appendTo(again, []byte(`{}`), false); pos != "2" || err != nil {
		t.Errorf("appendTo the stream opened again: %q %v", pos, err)
	}
}
