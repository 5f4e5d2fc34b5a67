package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcptest"
)

// trueTime is the time of the world a simulated fleet lives in; each
// instance's clock reads it plus its own offset.
type trueTime struct{ ns atomic.Int64 }

func (tt *trueTime) set(t time.Time)         { tt.ns.Store(t.UnixNano()) }
func (tt *trueTime) now() time.Time          { return time.Unix(0, tt.ns.Load()) }
func (tt *trueTime) advance(d time.Duration) { tt.ns.Add(int64(d)) }
func (tt *trueTime) offset(d time.Duration) func() time.Time {
	return func() time.Time { return tt.now().Add(d) }
}

// instance is a server of a simulated fleet and a client that reaches
// it, declaring elicitation.
type instance struct {
	*Server
	c *mcptest.Client
}

// skewedServer starts an instance of the fleet: the shared key, a clock
// offset from the true time, and a tool that asks for confirmation. Over
// loopback it listens on a port of its own; otherwise it is served in
// process.
func skewedServer(t *testing.T, tt *trueTime, loopback bool, offset time.Duration, opts Options) instance {
	t.Helper()
	opts.Now = tt.offset(offset)
	if opts.StateTTL == 0 {
		opts.StateTTL = time.Minute
	}
	s := newTestServer(t, &opts)
	form := confirmForm(t, "Confirm the transfer?")
	mustAddTool(t, s, Tool{Name: "transfer", InputSchema: transferSchema}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		res, err := req.Elicit(ctx, form, WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		return TextResult(fmt.Sprintf("confirmed with %s", res.Action)), nil
	})
	target := mcptest.Handler(s)
	if loopback {
		ts := httptest.NewServer(s)
		t.Cleanup(ts.Close)
		target = mcptest.URL(ts.URL, ts.Client())
	}
	return instance{s, newClientOpts(t, target, &mcptest.Options{Capabilities: capsOf(t, elicitCaps)})}
}

// TestFleetClockSkew runs instances whose clocks are 5 s ahead of and 5 s
// behind the true time (10 s apart): state issued by either is accepted by
// the other, the TTL still bounds it on the receiving instance's clock, and
// an instance further off than the leeway is refused with a reason that
// says so. It runs in process and over loopback HTTP.
func TestFleetClockSkew(t *testing.T) {
	t.Run("in process", func(t *testing.T) { testFleetClockSkew(t, false) })
	t.Run("loopback", func(t *testing.T) { testFleetClockSkew(t, true) })
}

func testFleetClockSkew(t *testing.T, loopback bool) {
	const skew = 5 * time.Second
	const ttl = time.Minute
	start := time.Date(2026, 7, 28, 9, 0, 0, 250_000_000, time.UTC)
	var tt trueTime
	tt.set(start)
	fast := skewedServer(t, &tt, loopback, +skew, Options{StateTTL: ttl})
	slow := skewedServer(t, &tt, loopback, -skew, Options{StateTTL: ttl})
	if fast.sealer.Leeway() != 30*time.Second {
		t.Fatalf("default leeway = %v, want %v", fast.sealer.Leeway(), 30*time.Second)
	}
	answer := map[string]any{"confirm": accept(true)}
	// issue asks s for round 1 and returns the requestState.
	issue := func(t *testing.T, s instance) string {
		t.Helper()
		return wantInputRequired(t, sendTransfer(t, s.c, nil), "confirm").RequestState
	}
	// accepted retries state on s and wants the tool's result.
	accepted := func(t *testing.T, s instance, state string) {
		t.Helper()
		res := completeResult(t, sendTransfer(t, s.c, nil, mcptest.Resume(state, answer)))
		if text, isErr := toolText(t, res); text != "confirmed with accept" || isErr {
			t.Errorf("result %q isError=%v", text, isErr)
		}
	}
	// refused retries state on s and wants -32602 naming reason.
	refused := func(t *testing.T, s instance, state, reason string) {
		t.Helper()
		e := wantError(t, sendTransfer(t, s.c, nil, mcptest.Resume(state, answer)), http.StatusBadRequest, -32602)
		if !strings.Contains(e.Message, "invalid requestState: "+reason) {
			t.Errorf("message %q does not name the reason %q", e.Message, reason)
		}
	}

	t.Run("ahead to behind", func(t *testing.T) {
		tt.set(start)
		state := issue(t, fast) // iat is 10 s ahead of slow's clock
		accepted(t, slow, state)
		accepted(t, fast, state)
	})
	t.Run("behind to ahead", func(t *testing.T) {
		tt.set(start)
		state := issue(t, slow)
		accepted(t, fast, state)
		accepted(t, slow, state)
	})
	t.Run("TTL holds on the receiving clock, ahead to behind", func(t *testing.T) {
		tt.set(start)
		state := issue(t, fast) // exp = start + 5 s + TTL, by fast's clock
		// fast's own clock reaches exp first.
		tt.set(start.Add(ttl - time.Millisecond))
		accepted(t, fast, state)
		tt.set(start.Add(ttl))
		refused(t, fast, state, "expired 0s ago by this server's clock")
		// slow's clock reaches exp 10 s later; no leeway is added to it.
		tt.set(start.Add(ttl + 2*skew - time.Millisecond))
		accepted(t, slow, state)
		tt.set(start.Add(ttl + 2*skew))
		refused(t, slow, state, "expired 0s ago")
		tt.advance(time.Millisecond)
		refused(t, slow, state, "expired 1ms ago")
	})
	t.Run("TTL holds on the receiving clock, behind to ahead", func(t *testing.T) {
		tt.set(start)
		state := issue(t, slow) // exp = start - 5 s + TTL, by slow's clock
		// fast's clock reaches it 10 s of true time early: the state lives
		// TTL - 10 s there, never longer than the TTL anywhere.
		tt.set(start.Add(ttl - 2*skew - time.Millisecond))
		accepted(t, fast, state)
		tt.set(start.Add(ttl - 2*skew))
		refused(t, fast, state, "expired")
		accepted(t, slow, state)
		tt.set(start.Add(ttl))
		refused(t, slow, state, "expired")
	})
	t.Run("skew beyond the leeway", func(t *testing.T) {
		// An instance 36 s ahead of the true time: 31 s ahead of fast and
		// 41 s ahead of slow, both beyond the 30 s leeway.
		far := skewedServer(t, &tt, loopback, 36*time.Second, Options{StateTTL: ttl})
		tt.set(start)
		state := issue(t, far)
		refused(t, fast, state, "issued in the future: its iat is 31s ahead of this server's clock, beyond the 30s leeway for clock skew; are the fleet's clocks synchronised?")
		refused(t, slow, state, "issued in the future: its iat is 41s ahead of this server's clock, beyond the 30s leeway")
		// A wider leeway on the receiving instance accepts it.
		wide := skewedServer(t, &tt, loopback, -skew, Options{StateTTL: ttl, StateLeeway: 45 * time.Second})
		accepted(t, wide, state)
		// Once true time has moved on 11 s, slow's clock is exactly the
		// leeway behind the iat: accepted.
		tt.advance(11 * time.Second)
		accepted(t, slow, state)
	})
	t.Run("no leeway", func(t *testing.T) {
		strict := skewedServer(t, &tt, loopback, -time.Second, Options{StateTTL: ttl, StateLeeway: -1})
		if strict.sealer.Leeway() != 0 {
			t.Fatalf("Leeway() = %v, want 0", strict.sealer.Leeway())
		}
		tt.set(start)
		state := issue(t, skewedServer(t, &tt, loopback, 0, Options{StateTTL: ttl}))
		refused(t, strict, state, "issued in the future: its iat is 1s ahead of this server's clock, beyond the 0s leeway")
		tt.advance(time.Second)
		accepted(t, strict, state)
	})
}
