package round

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// t0 is the tests' wall clock: a moment with a fraction of a second.
var t0 = time.Date(2026, 7, 28, 12, 0, 0, 987_000_000, time.UTC)

func at(t time.Time) func() time.Time { return func() time.Time { return t } }

// issuedAt seals a state for b on a sealer whose clock reads t0.
func issuedAt(t *testing.T, opts seal.SealerOptions, b seal.Binding) (string, *seal.State) {
	t.Helper()
	opts.Now = at(t0)
	st := &seal.State{Binding: b}
	tok, err := testSealer(t, opts).Seal(st)
	if err != nil {
		t.Fatal(err)
	}
	return tok, st
}

// openAt opens tok on a sealer whose clock reads now.
func openAt(t *testing.T, opts seal.SealerOptions, now time.Time, tok string, b seal.Binding) (*seal.State, error) {
	t.Helper()
	opts.Now = at(now)
	return openBound(testSealer(t, opts), tok, b)
}

// recordingLedger remembers the expiry it was given.
type recordingLedger struct{ expires time.Time }

func (l *recordingLedger) Redeem(_ context.Context, _ string, expires time.Time) error {
	l.expires = expires
	return nil
}

// A redemption outlives the state's expiry by the leeway: an instance whose
// clock is behind the ledger's still accepts the state after the ledger's
// clock has passed exp, and must still find the redemption.
func TestRedeemOutlivesExpiryByTheLeeway(t *testing.T) {
	b := testBinding(t)
	const ttl = time.Minute
	tok, _ := issuedAt(t, seal.SealerOptions{TTL: ttl}, b)
	exp := t0.Add(ttl)
	ctx := context.Background()

	st, err := openAt(t, seal.SealerOptions{}, t0, tok, b)
	if err != nil {
		t.Fatal(err)
	}
	var rec recordingLedger
	if err := New(mcp.ClientCapabilities{}, Responses{}, st, Options{}).Redeem(ctx, &rec, errReplayed); err != nil {
		t.Fatal(err)
	}
	if want := exp.Add(30 * time.Second); !rec.expires.Equal(want) {
		t.Errorf("ledger told %v, want exp + leeway %v", rec.expires, want)
	}

	// The fleet: the ledger's clock runs 5 s ahead of the true time, the
	// verifying instance's 5 s behind. The state is redeemed right away.
	const skew = 5 * time.Second
	truth := t0
	ledger := newTestLedger(func() time.Time { return truth.Add(skew) })
	redeem := func() error {
		st, err := openAt(t, seal.SealerOptions{}, truth.Add(-skew), tok, b)
		if err != nil {
			return err
		}
		return New(mcp.ClientCapabilities{}, Responses{}, st, Options{}).Redeem(ctx, ledger, errReplayed)
	}
	if err := redeem(); err != nil {
		t.Fatal(err)
	}
	// Just before the verifier's clock reaches exp it still accepts the
	// state; by the ledger's clock exp passed 10 s ago, and the replay must
	// still be caught.
	truth = exp.Add(skew - time.Millisecond)
	if err := redeem(); !errors.Is(err, errReplayed) {
		t.Fatalf("replay on the slow instance after the ledger's clock passed exp: %v, want ErrAlreadyRedeemed", err)
	}
	truth = exp.Add(skew)
	var se *seal.StateError
	if err := redeem(); !errors.As(err, &se) || !strings.Contains(se.Reason, "expired") {
		t.Fatalf("at exp on the verifier's clock: %v, want expired", err)
	}
}

// errReplayed is the test ledger's error for an id redeemed before.
var errReplayed = errors.New("already redeemed")

// testLedger is a ledger on a clock of its own, for the tests of this
// package (server.NewMemoryLedger sits above it).
type testLedger struct {
	now  func() time.Time
	used map[string]time.Time
}

func newTestLedger(now func() time.Time) *testLedger {
	if now == nil {
		now = time.Now
	}
	return &testLedger{now: now, used: map[string]time.Time{}}
}

func (l *testLedger) Redeem(ctx context.Context, id string, expires time.Time) error {
	if exp, ok := l.used[id]; ok && l.now().Before(exp) {
		return errReplayed
	}
	l.used[id] = expires
	return nil
}
