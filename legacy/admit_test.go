package legacy

import (
	"fmt"
	"slices"
	"testing"

	"github.com/baton-mcp/baton/internal/rpcwire"
)

// sendAll admits each message of one run and returns the indexes sent.
func sendAll(t *testing.T, p *peer, run []notification) []int {
	t.Helper()
	var out []int
	for i, n := range run {
		msg, err := rpcwire.EncodeNotification(n.method, n.params)
		if err != nil {
			t.Fatal(err)
		}
		if p.admit(n.method, msg) {
			out = append(out, i)
		}
	}
	return out
}

type notification struct {
	method string
	params any
}

func progress(tok any, v float64) notification {
	return notification{"notifications/progress", map[string]any{"progressToken": tok, "progress": v}}
}

func logLine(s string) notification {
	return notification{"notifications/message", map[string]any{"level": "info", "data": s}}
}

// TestAdmitRules checks the rules of the package documentation run by
// run: which notifications of each run of a handler go out.
func TestAdmitRules(t *testing.T) {
	p := &peer{}
	// Run 1: everything is new, repeated lines included; progress that
	// stands still or goes back is not sent.
	got := sendAll(t, p, []notification{progress("a", 1), logLine("x"), logLine("x"), progress("a", 1), progress("a", 0.5), progress(7, 1)})
	if want := []int{0, 1, 2, 5}; !slices.Equal(got, want) {
		t.Errorf("run 1 sent %v, want %v", got, want)
	}
	// Run 2 replays run 1 and goes further: only the new part goes out,
	// including a third copy of "x" and a changed line.
	p.newRun()
	got = sendAll(t, p, []notification{progress("a", 1), logLine("x"), logLine("x"), progress(7, 1), logLine("x"), logLine("y"), progress("a", 2), progress(7, 2)})
	if want := []int{4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Errorf("run 2 sent %v, want %v", got, want)
	}
	// Run 3 sends fewer copies than run 2: nothing is new.
	p.newRun()
	got = sendAll(t, p, []notification{progress("a", 2), logLine("y"), logLine("x")})
	if len(got) != 0 {
		t.Errorf("run 3 sent %v, want nothing", got)
	}
	// Other notifications follow the content rule.
	complete := notification{"notifications/elicitation/complete", map[string]any{"elicitationId": "e1"}}
	p.newRun()
	if got := sendAll(t, p, []notification{complete, complete}); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("first elicitation/complete run sent %v", got)
	}
	p.newRun()
	if got := sendAll(t, p, []notification{complete}); len(got) != 0 {
		t.Errorf("replayed elicitation/complete sent %v", got)
	}
}

// TestAdmitMemoryIsBounded sends more distinct notifications than a peer
// remembers: they all go out, the peer's maps stay at the bound, and a
// re-run suppresses exactly the remembered ones.
func TestAdmitMemoryIsBounded(t *testing.T) {
	p := &peer{}
	run := make([]notification, 0, maxRemembered+50)
	for i := range maxRemembered + 50 {
		run = append(run, logLine(fmt.Sprint("line ", i)))
	}
	if got := sendAll(t, p, run); len(got) != len(run) {
		t.Fatalf("run 1 sent %d of %d", len(got), len(run))
	}
	if len(p.sent) != maxRemembered || len(p.seen) > maxRemembered {
		t.Fatalf("remembered %d sent and %d seen, want at most %d", len(p.sent), len(p.seen), maxRemembered)
	}
	p.newRun()
	if got := sendAll(t, p, run); len(got) != 50 || got[0] != maxRemembered {
		t.Errorf("run 2 sent %d (from %v), want the 50 not remembered", len(got), got[:min(len(got), 1)])
	}
	tokens := make([]notification, 0, maxRemembered+1)
	for i := range maxRemembered + 1 {
		tokens = append(tokens, progress(i, 1))
	}
	q := &peer{}
	if got := sendAll(t, q, tokens); len(got) != len(tokens) || len(q.progress) != maxRemembered {
		t.Errorf("sent %d of %d progress tokens, remembered %d", len(got), len(tokens), len(q.progress))
	}
}
