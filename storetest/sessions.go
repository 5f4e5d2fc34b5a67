package storetest

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/contract"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
)

// waitLimit bounds every wait for something the test expects to happen.
const waitLimit = 10 * time.Second

// Sessions runs the legacy.Store contract against stores made by
// newStore, each empty, each check in its own subtest. The
// stores read the wall clock; expiry is checked with sessions that go
// idle a moment after they are created.
func Sessions(t *testing.T, newStore func(t *testing.T) legacy.Store) {
	contract.Run(t, sessionChecks, newStore)
}

// CheckSessions runs the legacy.Store contract against stores made by
// newStore, each empty, and returns an error describing every failure, or
// nil. Unlike Sessions it needs
// no *testing.T, so a program (or an Example) can check a store.
func CheckSessions(newStore func() (legacy.Store, error)) error {
	return contract.Test("storetest.CheckSessions", sessionChecks, newStore)
}

// sessionChecks are the contract, one check per entry, each on an empty store.
var sessionChecks = []contract.Check[legacy.Store]{
	{Name: "CreateGet", Run: testCreateGet},
	{Name: "Copies", Run: testCopies},
	{Name: "Update", Run: testUpdate},
	{Name: "ConcurrentUpdates", Run: testConcurrentUpdates},
	{Name: "IdleExpiry", Run: testIdleExpiry},
	{Name: "Limits", Run: testLimits},
	{Name: "ExpiryFreesSlots", Run: testExpiryFreesSlots},
	{Name: "Delete", Run: testDelete},
	{Name: "Messages", Run: testMessages},
	{Name: "Calls", Run: testCalls},
}

// tb is what the checks use of a *testing.T; CheckSessions and CheckTasks
// give them a recorder.
type tb = contract.TB

// SessionRecord returns a session record with a fresh id, owned by owner.
func SessionRecord(owner string) *legacy.Record {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return &legacy.Record{
		ID:              base64.RawURLEncoding.EncodeToString(b),
		ProtocolVersion: "2025-11-25",
		Capabilities:    mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
		ClientInfo:      &mcp.Implementation{Name: "store-test", Version: "1.0.0"},
		Principal:       "alice",
		Owner:           owner,
		LogLevel:        "info",
		CreatedAt:       time.Now().Truncate(time.Millisecond),
	}
}

var noLimits = legacy.Limits{Idle: time.Minute}

func create(t tb, s legacy.Store, r *legacy.Record, lim legacy.Limits) {
	t.Helper()
	if err := s.Create(context.Background(), r, lim); err != nil {
		t.Fatalf("Create: %v", err)
	}
}

func testCreateGet(t tb, s legacy.Store) {
	ctx := context.Background()
	r := SessionRecord("principal:alice")
	r.Subscriptions = []string{"test://a"}
	before := time.Now().Add(-time.Second)
	create(t, s, r, noLimits)
	if err := s.Create(ctx, r, noLimits); !errors.Is(err, legacy.ErrExists) {
		t.Errorf("second Create with the same id: %v, want ErrExists", err)
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if got.ID != r.ID || got.ProtocolVersion != "2025-11-25" || got.Principal != "alice" || got.Owner != "principal:alice" ||
		got.LogLevel != "info" || !slices.Equal(got.Subscriptions, []string{"test://a"}) || got.Stream != "" ||
		!got.CreatedAt.Equal(r.CreatedAt) || got.ClientInfo == nil || got.ClientInfo.Name != "store-test" ||
		!got.Capabilities.CanElicitForm() {
		t.Errorf("Get = %+v, want the record created %+v", got, r)
	}
	if got.LastUsed.Before(before) || got.LastUsed.After(time.Now().Add(time.Second)) {
		t.Errorf("LastUsed = %v, want about now", got.LastUsed)
	}
	if _, err := s.Get(ctx, "no-such-session"); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Get of an unknown id: %v, want ErrNotFound", err)
	}
	if _, err := s.Touch(ctx, "no-such-session", time.Minute); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Touch of an unknown id: %v, want ErrNotFound", err)
	}
	if n, err := s.Count(ctx); err != nil || n != 1 {
		t.Errorf("Count = %d, %v; want 1", n, err)
	}
}

// A record handed out is the caller's to change.
func testCopies(t tb, s legacy.Store) {
	ctx := context.Background()
	r := SessionRecord("address:192.0.2.1")
	r.Subscriptions = []string{"test://a"}
	create(t, s, r, noLimits)
	r.Subscriptions[0] = "changed-after-create"
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.Subscriptions[0] = "changed-after-get"
	got.LogLevel = "debug"
	again, err := s.Touch(ctx, r.ID, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if again.Subscriptions[0] != "test://a" || again.LogLevel != "info" {
		t.Errorf("the store's record changed with a copy: %+v", again)
	}
}

func testUpdate(t tb, s legacy.Store) {
	ctx := context.Background()
	r := SessionRecord("principal:alice")
	create(t, s, r, noLimits)
	got, err := s.Update(ctx, r.ID, func(rec *legacy.Record) error {
		rec.LogLevel = "debug"
		rec.Subscriptions = append(rec.Subscriptions, "test://b")
		rec.Stream = "instance-a"
		rec.Principal, rec.Owner = "mallory", "principal:mallory" // must not stick
		return nil
	})
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	if got.LogLevel != "debug" || !slices.Equal(got.Subscriptions, []string{"test://b"}) || got.Stream != "instance-a" || got.Rev != r.Rev+1 {
		t.Errorf("Update returned %+v", got)
	}
	if got.Principal != "alice" || got.Owner != "principal:alice" {
		t.Errorf("Update changed the principal or owner: %+v", got)
	}
	read, err := s.Get(ctx, r.ID)
	if err != nil || read.LogLevel != "debug" || read.Stream != "instance-a" || read.Rev != got.Rev || read.Principal != "alice" {
		t.Errorf("Get after Update = %+v, %v", read, err)
	}
	same, err := s.Update(ctx, r.ID, func(rec *legacy.Record) error {
		rec.LogLevel = "error"
		return legacy.ErrNoUpdate
	})
	if err != nil || same.LogLevel != "debug" || same.Rev != got.Rev {
		t.Errorf("Update with ErrNoUpdate = %+v, %v; want the record unchanged", same, err)
	}
	boom := errors.New("boom")
	if _, err := s.Update(ctx, r.ID, func(*legacy.Record) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("Update whose fn fails: %v, want its error", err)
	}
	if _, err := s.Update(ctx, "no-such-session", func(*legacy.Record) error { return nil }); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Update of an unknown id: %v, want ErrNotFound", err)
	}
}

// Concurrent updates are applied one after the other: none is lost.
func testConcurrentUpdates(t tb, s legacy.Store) {
	ctx := context.Background()
	r := SessionRecord("principal:alice")
	create(t, s, r, noLimits)
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			_, err := s.Update(ctx, r.ID, func(rec *legacy.Record) error {
				rec.Subscriptions = append(rec.Subscriptions, fmt.Sprintf("test://%d", i))
				return nil
			})
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Update: %v", err)
		}
	}
	got, err := s.Get(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Subscriptions) != n || got.Rev != r.Rev+n {
		t.Errorf("after %d concurrent updates: %d subscriptions, Rev %d: updates were lost", n, len(got.Subscriptions), got.Rev)
	}
}

// waitGone polls until the session is gone, failing after waitLimit.
func waitGone(t tb, s legacy.Store, id string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		_, err := s.Get(context.Background(), id)
		if errors.Is(err, legacy.ErrNotFound) {
			return time.Since(start)
		}
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if time.Since(start) > waitLimit {
			t.Fatalf("the session outlived its idle time by %v", waitLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A session expires once it has been idle for Limits.Idle; Touch restarts
// its idle time, Get and Update do not.
func testIdleExpiry(t tb, s legacy.Store) {
	ctx := context.Background()
	const idle = 300 * time.Millisecond
	touched, read := SessionRecord("principal:alice"), SessionRecord("principal:alice")
	create(t, s, touched, legacy.Limits{Idle: idle})
	create(t, s, read, legacy.Limits{Idle: idle})
	start := time.Now()
	// Touch the one, only read and update the other, for twice the idle time.
	for time.Since(start) < 2*idle {
		time.Sleep(idle / 6)
		if _, err := s.Touch(ctx, touched.ID, idle); err != nil {
			t.Fatalf("Touch %v after the session was created: %v", time.Since(start), err)
		}
		if _, err := s.Get(ctx, read.ID); err != nil && !errors.Is(err, legacy.ErrNotFound) {
			t.Fatal(err)
		}
		_, _ = s.Update(ctx, read.ID, func(r *legacy.Record) error { r.LogLevel = "debug"; return nil })
	}
	if _, err := s.Get(ctx, read.ID); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("a session only read and updated for %v: %v, want ErrNotFound after %v idle", time.Since(start), err, idle)
	}
	if _, err := s.Get(ctx, touched.ID); err != nil {
		t.Errorf("a session touched every %v: %v", idle/6, err)
	}
	waitGone(t, s, touched.ID)
	if _, err := s.Update(ctx, touched.ID, func(*legacy.Record) error { return nil }); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Update after expiry: %v, want ErrNotFound", err)
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Errorf("Count after every session expired = %d, %v; want 0", n, err)
	}
}

func limitError(t tb, err error, perOwner bool, limit int, idle time.Duration) *legacy.LimitError {
	t.Helper()
	var le *legacy.LimitError
	if !errors.As(err, &le) {
		t.Fatalf("Create over a limit: %v, want a *LimitError", err)
	}
	if le.PerOwner != perOwner || le.Limit != limit || le.RetryAfter <= 0 || le.RetryAfter > idle {
		t.Errorf("LimitError = %+v, want PerOwner %v, Limit %d, RetryAfter in (0, %v]", le, perOwner, limit, idle)
	}
	return le
}

// The owner's quota and the total refuse sessions, saying when to retry;
// Delete frees a slot.
func testLimits(t tb, s legacy.Store) {
	ctx := context.Background()
	const idle = time.Minute
	lim := legacy.Limits{Idle: idle, MaxSessions: 5, MaxPerOwner: 3}
	var flood []*legacy.Record
	for range 3 {
		r := SessionRecord("address:198.51.100.7")
		create(t, s, r, lim)
		flood = append(flood, r)
	}
	for range 3 {
		limitError(t, s.Create(ctx, SessionRecord("address:198.51.100.7"), lim), true, 3, idle)
	}
	// Another owner still gets sessions, up to the total.
	create(t, s, SessionRecord("address:198.51.100.8"), lim)
	create(t, s, SessionRecord("principal:bob"), lim)
	limitError(t, s.Create(ctx, SessionRecord("principal:carol"), lim), false, 5, idle)
	if n, err := s.Count(ctx); err != nil || n != 5 {
		t.Errorf("Count = %d, %v; want 5", n, err)
	}
	// Ending one of the flood frees a slot, for anyone.
	if ok, err := s.Delete(ctx, flood[0].ID); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	create(t, s, SessionRecord("principal:carol"), lim)
	limitError(t, s.Create(ctx, SessionRecord("principal:dave"), lim), false, 5, idle)
}

// Expired sessions count against no limit, and the retry time is when the
// soonest of the counted sessions expires.
func testExpiryFreesSlots(t tb, s legacy.Store) {
	ctx := context.Background()
	const idle = 400 * time.Millisecond
	lim := legacy.Limits{Idle: idle, MaxPerOwner: 2}
	first := SessionRecord("address:203.0.113.5")
	create(t, s, first, lim)
	time.Sleep(idle / 2)
	create(t, s, SessionRecord("address:203.0.113.5"), lim)
	le := limitError(t, s.Create(ctx, SessionRecord("address:203.0.113.5"), lim), true, 2, idle)
	if le.RetryAfter > idle/2+50*time.Millisecond {
		t.Errorf("RetryAfter = %v, want at most about %v (when the first session goes)", le.RetryAfter, idle/2)
	}
	waitGone(t, s, first.ID)
	create(t, s, SessionRecord("address:203.0.113.5"), lim)
}

func testDelete(t tb, s legacy.Store) {
	ctx := context.Background()
	r := SessionRecord("principal:alice")
	create(t, s, r, noLimits)
	if ok, err := s.Delete(ctx, r.ID); !ok || err != nil {
		t.Errorf("Delete = %v, %v; want true", ok, err)
	}
	if ok, err := s.Delete(ctx, r.ID); ok || err != nil {
		t.Errorf("second Delete = %v, %v; want false", ok, err)
	}
	if _, err := s.Get(ctx, r.ID); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Get after Delete: %v", err)
	}
	if _, err := s.Touch(ctx, r.ID, time.Minute); !errors.Is(err, legacy.ErrNotFound) {
		t.Errorf("Touch after Delete: %v", err)
	}
	if n, err := s.Count(ctx); err != nil || n != 0 {
		t.Errorf("Count after Delete = %d, %v", n, err)
	}
}

// A message for an instance reaches it alone; one for every instance
// reaches all of them.
func testMessages(t tb, s legacy.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := map[string]chan string{"a": make(chan string, 64), "b": make(chan string, 64)}
	done := make(chan error, 2)
	for inst, ch := range got {
		go func() { done <- s.Receive(ctx, inst, func(msg []byte) { ch <- string(msg) }) }()
	}
	// A receiver may take a moment to subscribe: publish until one arrives.
	await := func(inst, msg, to string) {
		t.Helper()
		deadline := time.Now().Add(waitLimit)
		for {
			if err := s.Publish(ctx, to, []byte(msg)); err != nil {
				t.Fatalf("Publish: %v", err)
			}
			select {
			case m := <-got[inst]:
				if m != msg {
					t.Fatalf("instance %s got %q, want %q", inst, m, msg)
				}
				return
			case <-time.After(20 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatalf("no message reached instance %s", inst)
				}
			}
		}
	}
	await("a", "for a", "a")
	await("b", "for b", "b")
	// Both subscribed now: drain the repeats, then one message for a
	// alone and one for all.
	time.Sleep(50 * time.Millisecond)
	for _, ch := range got {
		for len(ch) > 0 {
			<-ch
		}
	}
	if err := s.Publish(ctx, "a", []byte("only a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Publish(ctx, "", []byte("everyone")); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"a": {"only a", "everyone"}, "b": {"everyone"}}
	for inst, msgs := range want {
		for _, m := range msgs {
			select {
			case g := <-got[inst]:
				if g != m {
					t.Errorf("instance %s got %q, want %q", inst, g, m)
				}
			case <-time.After(waitLimit):
				t.Fatalf("instance %s did not get %q", inst, m)
			}
		}
	}
	select {
	case g := <-got["b"]:
		t.Errorf("instance b got %q, meant for a", g)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Receive after its context ended: %v, want context.Canceled", err)
			}
		case <-time.After(waitLimit):
			t.Fatal("Receive did not return when its context ended")
		}
	}
}
