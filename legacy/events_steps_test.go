package legacy

import (
	"context"
	"errors"
	"reflect"
	"testing"
)

// The memoryEventStore's OpenStreamAppend and AppendEndStream leave a
// stream as OpenStream then Append, and Append then EndStream, do.
func TestMemoryEventStoreSteps(t *testing.T) {
	ctx := context.Background()
	meta := StreamMeta{Instance: "i1", Request: []byte(`7`)}
	one, two := newMemoryEventStore(0), newMemoryEventStore(0)
	var pos1, pos2 []string
	p, err := one.OpenStreamAppend(ctx, "sid", "st", meta, []byte(`{"first":1}`))
	pos1 = append(pos1, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := two.OpenStream(ctx, "sid", "st", meta); err != nil {
		t.Fatal(err)
	}
	p, _ = two.Append(ctx, "sid", "st", []byte(`{"first":1}`))
	pos2 = append(pos2, p)
	p, _ = one.Append(ctx, "sid", "st", []byte(`{"second":2}`))
	pos1 = append(pos1, p)
	p, _ = two.Append(ctx, "sid", "st", []byte(`{"second":2}`))
	pos2 = append(pos2, p)
	p, err = one.AppendEndStream(ctx, "sid", "st", []byte(`{"last":3}`))
	if err != nil {
		t.Fatal(err)
	}
	pos1 = append(pos1, p)
	p, _ = two.Append(ctx, "sid", "st", []byte(`{"last":3}`))
	pos2 = append(pos2, p)
	if err := two.EndStream(ctx, "sid", "st"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pos1, pos2) {
		t.Fatalf("positions %v, in separate steps %v", pos1, pos2)
	}
	for _, after := range []string{"", pos1[0], pos1[1]} {
		e1, end1, err1 := one.Read(ctx, "sid", "st", after, 0)
		e2, end2, err2 := two.Read(ctx, "sid", "st", after, 0)
		if err1 != nil || err2 != nil || !end1 || !end2 || !reflect.DeepEqual(e1, e2) {
			t.Fatalf("Read after %q: %v %v %v, in separate steps %v %v %v", after, e1, end1, err1, e2, end2, err2)
		}
	}
	m1, _ := one.StreamMeta(ctx, "sid", "st")
	m2, _ := two.StreamMeta(ctx, "sid", "st")
	if !reflect.DeepEqual(m1, m2) {
		t.Fatalf("StreamMeta %+v, in separate steps %+v", m1, m2)
	}
	if _, err := one.AppendEndStream(ctx, "sid", "gone", []byte(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("AppendEndStream on no stream: %v, want ErrNotFound", err)
	}
	if _, _, err := one.Read(ctx, "sid", "gone", "", 0); !errors.Is(err, ErrNotFound) {
		t.Fatalf("AppendEndStream made a stream: %v", err)
	}
}

// The memoryEventStore's EventStore methods keep a copy of msg (a caller
// may reuse its buffer); only the package's own kept streams hand theirs
// over (appendKept and the others). A stream also lets go of the events
// its first array held once they moved out of it.
func TestMemoryEventStoreCopies(t *testing.T) {
	ctx := context.Background()
	m := newMemoryEventStore(0)
	bufs := [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`), []byte(`{"c":3}`)}
	if _, err := m.OpenStreamAppend(ctx, "sid", "st", StreamMeta{}, bufs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Append(ctx, "sid", "st", bufs[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := m.AppendEndStream(ctx, "sid", "st", bufs[2]); err != nil {
		t.Fatal(err)
	}
	for _, b := range bufs {
		copy(b, "XXXXXXX")
	}
	evs, ended, err := m.Read(ctx, "sid", "st", "", 0)
	if err != nil || !ended || len(evs) != 3 {
		t.Fatalf("Read: %d events, ended %v, %v", len(evs), ended, err)
	}
	for i, want := range []string{`{"a":1}`, `{"b":2}`, `{"c":3}`} {
		if string(evs[i].Msg) != want {
			t.Errorf("event %d: %s, want %s (the caller's buffer was kept)", i, evs[i].Msg, want)
		}
	}
	m.mu.Lock()
	s := m.streams[streamKey{"sid", "st"}]
	first := s.first
	m.mu.Unlock()
	if first[0].Msg != nil || first[1].Msg != nil {
		t.Error("the stream still holds the events of its first array after they moved out")
	}
}
