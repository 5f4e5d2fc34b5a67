package server

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestMemoryLedger(t *testing.T) {
	l := newMemoryLedger(nil)
	ctx := context.Background()
	now := time.Now()
	l.now = func() time.Time { return now }
	if err := l.Redeem(ctx, "a", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := l.Redeem(ctx, "a", now.Add(time.Minute)); !errors.Is(err, ErrAlreadyRedeemed) {
		t.Fatalf("second redemption: %v", err)
	}
	if err := l.Redeem(ctx, "b", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// After expiry the id is forgotten (the state it names is dead anyway).
	now = now.Add(2 * time.Minute)
	if err := l.Redeem(ctx, "a", now.Add(time.Minute)); err != nil {
		t.Fatalf("after expiry: %v", err)
	}
	if len(l.used) != 1 {
		t.Fatalf("expired entries are swept: %d left, want only the new a", len(l.used))
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := l.Redeem(cancelled, "c", now); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}
