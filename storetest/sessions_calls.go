package storetest

import (
	"context"
	"errors"
	"time"

	"github.com/baton-mcp/baton/legacy"
)

// testCalls checks the parked requests: an answer is kept only for a
// request parked for its session and not answered yet, read back until
// Unpark, and gone once the park's ttl passed.
func testCalls(t tb, s legacy.Store) {
	ctx := context.Background()
	if err := s.Park(ctx, "sess-a", "inst.1", time.Minute); err != nil {
		t.Fatalf("Park: %v", err)
	}
	if err := s.Park(ctx, "sess-a", "inst.2", 200*time.Millisecond); err != nil {
		t.Fatalf("Park: %v", err)
	}
	if err := s.Answer(ctx, "sess-b", "inst.1", []byte(`{"result":{}}`)); !errors.Is(err, legacy.ErrNotWaiting) {
		t.Errorf("Answer from another session: %v, want ErrNotWaiting", err)
	}
	if err := s.Answer(ctx, "sess-a", "inst.9", []byte(`{"result":{}}`)); !errors.Is(err, legacy.ErrNotWaiting) {
		t.Errorf("Answer to a request never parked: %v, want ErrNotWaiting", err)
	}
	if got, err := s.Answers(ctx, []string{"inst.1", "inst.2", "inst.9"}); err != nil || len(got) != 0 {
		t.Errorf("Answers before any answer = %v, %v; want none", got, err)
	}
	if err := s.Answer(ctx, "sess-a", "inst.1", []byte(`{"result":{"n":1}}`)); err != nil {
		t.Fatalf("Answer: %v", err)
	}
	if err := s.Answer(ctx, "sess-a", "inst.1", []byte(`{"result":{"n":2}}`)); !errors.Is(err, legacy.ErrNotWaiting) {
		t.Errorf("a second Answer: %v, want ErrNotWaiting", err)
	}
	got, err := s.Answers(ctx, []string{"inst.1", "inst.2"})
	if err != nil || len(got) != 1 || string(got["inst.1"]) != `{"result":{"n":1}}` {
		t.Errorf("Answers = %q, %v; want the first answer of inst.1 only", got, err)
	}
	if err := s.Unpark(ctx, "inst.1"); err != nil {
		t.Fatalf("Unpark: %v", err)
	}
	if got, err := s.Answers(ctx, []string{"inst.1"}); err != nil || len(got) != 0 {
		t.Errorf("Answers after Unpark = %q, %v; want none", got, err)
	}
	deadline := time.Now().Add(waitLimit)
	for {
		err := s.Answer(ctx, "sess-a", "inst.2", []byte(`{"result":{}}`))
		if errors.Is(err, legacy.ErrNotWaiting) {
			break
		}
		if err != nil {
			t.Fatalf("Answer: %v", err)
		}
		// Kept before the ttl passed: start again with a fresh key.
		if time.Now().After(deadline) {
			t.Fatal("a parked request never expired")
		}
		_ = s.Unpark(ctx, "inst.2")
		if err := s.Park(ctx, "sess-a", "inst.2", 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
