//go:build linux

package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// timedTransport records how long each request waits for its response's
// headers: for a 2025-11-25 call, until its stream opens; for an answer,
// until its 202 (or refusal).
type timedTransport struct {
	mu      sync.Mutex
	n       int
	byCode  map[int]int
	longest time.Duration
	slowest string
}

func (t *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := http.DefaultTransport.RoundTrip(r)
	d := time.Since(start)
	what := r.Method + " " + r.Header.Get("Mcp-Method")
	code := 0
	if err == nil {
		code = resp.StatusCode
		what += fmt.Sprintf(" -> %d from %s", code, resp.Header.Get("X-Upstream"))
	} else {
		what += " -> " + err.Error()
	}
	t.mu.Lock()
	t.n++
	t.byCode[code]++
	if d > t.longest {
		t.longest, t.slowest = d, what
	}
	t.mu.Unlock()
	return resp, err
}

// legacyLoad runs onboard_user (two elicitations) in 2025-11-25 sessions
// of the project's test client through the front, over and over, until
// stop is called; every HTTP request is timed.
type legacyLoad struct {
	tr           *timedTransport
	done, failed atomic.Int64
	mu           sync.Mutex
	errs         map[string]int // failures, by message
	stop         atomic.Bool
	wg           sync.WaitGroup
	clients      []*mcptest.Client
}

// startLegacyLoad opens n sessions (before any fault) and starts their
// flows.
func startLegacyLoad(ctx context.Context, t *testing.T, front string, n int) *legacyLoad {
	t.Helper()
	l := &legacyLoad{tr: &timedTransport{byCode: map[int]int{}}, errs: map[string]int{}}
	hc := &http.Client{Transport: l.tr}
	for range n {
		c, err := mcptest.New(mcptest.URL(front, hc), &mcptest.Options{
			Protocol: mcp.LegacyProtocolVersion,
			Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
				if strings.HasPrefix(req.Message, "What is your name") {
					return mcptest.Accept(map[string]any{"name": "Paused"})
				}
				return mcptest.Accept(map[string]any{"email": "paused@example.com"})
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Connect(ctx); err != nil {
			t.Fatalf("open a 2025-11-25 session: %v", err)
		}
		l.clients = append(l.clients, c)
	}
	for _, c := range l.clients {
		l.wg.Go(func() {
			for !l.stop.Load() && ctx.Err() == nil {
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				res, err := c.CallTool(cctx, "onboard_user", map[string]any{})
				cancel()
				switch {
				case err == nil && res.Text() == "Welcome aboard, Paused <paused@example.com>":
					l.done.Add(1)
				default:
					msg := fmt.Sprint(err)
					if err == nil {
						msg = "result " + res.Text()
					}
					key := msg
					if i := strings.Index(key, "(ref "); i >= 0 {
						key = key[:i] // the log reference differs each time
					}
					l.failed.Add(1)
					l.mu.Lock()
					l.errs[key]++
					l.mu.Unlock()
					time.Sleep(100 * time.Millisecond)
				}
			}
		})
	}
	return l
}

// finish stops the flows, waits for them, and ends the sessions (DELETE),
// as a client that is done does: a call whose flow failed on the client's
// side (its answer refused during the pause) is still parked on its
// instance, waiting for an answer until CallTimeout; ending its session
// ends it, so that it does not hold a later drain.
func (l *legacyLoad) finish(ctx context.Context, t *testing.T) {
	l.stop.Store(true)
	l.wg.Wait()
	for _, c := range l.clients {
		if status, err := c.EndSession(ctx); err != nil || status != http.StatusNoContent {
			t.Errorf("ending a 2025-11-25 session: HTTP %d, %v; want 204", status, err)
		}
	}
}

// String sums the load up.
func (l *legacyLoad) String() string {
	l.tr.mu.Lock()
	defer l.tr.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	var errs []string
	for k, v := range l.errs {
		errs = append(errs, fmt.Sprintf("%d× %s", v, k))
	}
	return fmt.Sprintf("%d 2025-11-25 sessions: %d onboard_user flows completed, %d failed (%s); %d HTTP requests by status %v, the longest waited %v for its response (%s)",
		len(l.clients), l.done.Load(), l.failed.Load(), strings.Join(errs, "; "), l.tr.n, l.tr.byCode, l.tr.longest.Round(10*time.Millisecond), l.tr.slowest)
}
