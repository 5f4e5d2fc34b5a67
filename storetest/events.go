package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/baton-mcp/baton/legacy"
)

// Events checks that a legacy.EventStore keeps the contract resumable
// streams rely on: events read back in order after a position, a read
// that waits returns when an event is appended, the end is seen, and a
// stream is found only in its own session.
func Events(t *testing.T, newStore func(t *testing.T) legacy.EventStore) {
	t.Run("AppendRead", func(t *testing.T) { testEvents(t, newStore(t)) })
	t.Run("Wait", func(t *testing.T) { testEventsWait(t, newStore(t)) })
}

func testEvents(t *testing.T, s legacy.EventStore) {
	ctx := context.Background()
	meta := legacy.StreamMeta{Instance: "inst-a", Request: json.RawMessage(`"r1"`)}
	if err := s.OpenStream(ctx, "sess-a", "streamAAAAAAAAAA", meta); err != nil {
		t.Fatalf("OpenStream: %v", err)
	}
	if _, err := s.StreamMeta(ctx, "sess-b", "streamAAAAAAAAAA"); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("StreamMeta from another session: %v, want ErrNotFound", err)
	}
	if _, _, err := s.Read(ctx, "sess-b", "streamAAAAAAAAAA", "", 0); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Read from another session: %v, want ErrNotFound", err)
	}
	got, err := s.StreamMeta(ctx, "sess-a", "streamAAAAAAAAAA")
	if err != nil || got.Instance != "inst-a" || string(got.Request) != `"r1"` {
		t.Errorf("StreamMeta = %+v, %v", got, err)
	}
	var pos []string
	for _, m := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		p, err := s.Append(ctx, "sess-a", "streamAAAAAAAAAA", []byte(m))
		if err != nil {
			t.Fatalf("Append: %v", err)
		}
		pos = append(pos, p)
	}
	evs, ended, err := s.Read(ctx, "sess-a", "streamAAAAAAAAAA", pos[0], 0)
	if err != nil || ended || len(evs) != 2 || string(evs[0].Msg) != `{"n":2}` || evs[1].Pos != pos[2] {
		t.Errorf("Read after the first = %v, ended %v, %v; want events 2 and 3", evs, ended, err)
	}
	if err := s.EndStream(ctx, "sess-a", "streamAAAAAAAAAA"); err != nil {
		t.Fatalf("EndStream: %v", err)
	}
	evs, ended, err = s.Read(ctx, "sess-a", "streamAAAAAAAAAA", pos[2], time.Second)
	if err != nil || !ended || len(evs) != 0 {
		t.Errorf("Read after the last of an ended stream = %v, ended %v, %v; want none, ended", evs, ended, err)
	}
	if _, err := s.Append(ctx, "sess-a", "streamBBBBBBBBBB", []byte(`{}`)); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Append to a stream never opened: %v, want ErrNotFound", err)
	}
}

func testEventsWait(t *testing.T, s legacy.EventStore) {
	ctx := context.Background()
	if err := s.OpenStream(ctx, "sess-a", "streamCCCCCCCCCC", legacy.StreamMeta{Instance: "inst-a"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Append(ctx, "sess-a", "streamCCCCCCCCCC", []byte(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		_, _ = s.Append(ctx, "sess-a", "streamCCCCCCCCCC", []byte(`{"n":2}`))
	}()
	deadline := time.Now().Add(waitLimit)
	for {
		evs, _, err := s.Read(ctx, "sess-a", "streamCCCCCCCCCC", p, 2*time.Second)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if len(evs) == 1 && string(evs[0].Msg) == `{"n":2}` {
			return
		}
		if len(evs) != 0 || time.Now().After(deadline) {
			t.Fatalf("waiting Read = %v, want the event appended meanwhile", evs)
		}
	}
}
