package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// pairTool registers "pair": a blocking-style handler whose two goroutines
// each ask their own question ("a?" and "b?") and report what they got.
// order, if set, says in which order the goroutines ask on this run ("ab"
// or "ba"); otherwise they race.
func pairTool(t *testing.T, s *Server, order func(req *ToolRequest) string) {
	t.Helper()
	mustAddTool(t, s, Tool{Name: "pair"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		var (
			wg    sync.WaitGroup
			got   [2]*elicit.Result
			errs  [2]error
			turns = map[string]chan struct{}{"a": make(chan struct{}), "b": make(chan struct{})}
		)
		seq := "ab"
		if order != nil {
			seq = order(req)
		}
		for i, which := range []string{"a", "b"} {
			wg.Go(func() {
				if order != nil && which == seq[1:] {
					<-turns[seq[:1]] // the second waits until the first has asked
				}
				got[i], errs[i] = req.CreateFormElicitation(ctx, which+"?", confirmForm(t, which+"?").RequestedSchema)
				close(turns[which])
			})
		}
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			return nil, err
		}
		return TextResult("a=" + string(got[0].Content) + " b=" + string(got[1].Content)), nil
	})
}

// answerByMessage answers each elicitation with accept(ok), where ok is
// what answers maps the request's message to.
func answerByMessage(answers map[string]bool) func(context.Context, *elicit.Request) (*elicit.Result, error) {
	return func(_ context.Context, req *elicit.Request) (*elicit.Result, error) {
		ok, known := answers[req.Message]
		if !known {
			return nil, fmt.Errorf("unexpected question %q", req.Message)
		}
		return mcptest.Accept(map[string]any{"ok": ok})
	}
}

// pairClient returns a client of s that declares form elicitation and
// answers "a?" with true, "b?" with false.
func pairClient(t *testing.T, s *Server) *mcptest.Client {
	t.Helper()
	return newClientOpts(t, mcptest.Handler(s), &mcptest.Options{
		Capabilities: capsOf(t, formCaps),
		Elicitation:  answerByMessage(map[string]bool{"a?": true, "b?": false}),
		MaxRounds:    2,
	})
}

// wantPairRounds checks a pair call's first round asked both questions at
// once, under the automatic keys.
func wantPairRounds(t *testing.T, ex *mcptest.Exchange) {
	t.Helper()
	if len(ex.Rounds) != 2 {
		t.Fatalf("%d rounds, want 2", len(ex.Rounds))
	}
	if keys := fmt.Sprint(roundKeys(ex)); keys != "[[baton:0 baton:1]]" && keys != "[[baton:1 baton:0]]" {
		t.Fatalf("round 1 asked %s, want baton:0 and baton:1", keys)
	}
}

// Two goroutines of one handler ask at once on the stateless protocol.
// Whatever order the scheduler gives them, on every round, each goroutine
// gets the answer to its own question or the request fails with a clear
// error naming the order; it never gets the other's answer. Run with
// -race: the Round is shared by both goroutines.
func TestConcurrentBlockingCallsModern(t *testing.T) {
	s := newTestServer(t, nil)
	pairTool(t, s, nil)
	c := pairClient(t, s)
	completed, reordered := 0, 0
	for range 40 {
		res, err := c.CallTool(testContext(t), "pair", nil)
		var e *mcptest.Error
		if errors.As(err, &e) {
			if e.Code != mcp.InternalError || e.Round != 2 || !strings.Contains(e.Message, "different order") {
				t.Fatalf("error %v, want a complete result or a round-2 error naming the order", err)
			}
			reordered++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		wantPairRounds(t, res.Exchange)
		if text := res.Text(); text != `a={"ok":true} b={"ok":false}` || res.IsError {
			t.Fatalf("round 2: %q (isError %v): an answer reached the wrong question", text, res.IsError)
		}
		completed++
	}
	t.Logf("%d completed, %d refused as reordered", completed, reordered)
}

// The same, with the order forced: the same order on both rounds completes
// with each goroutine's own answer; the opposite order fails clearly, with
// -32603 naming the order, and never hands an answer to the wrong question.
func TestConcurrentBlockingCallsReordered(t *testing.T) {
	for _, tc := range []struct{ first, second string }{{"ab", "ab"}, {"ba", "ba"}, {"ab", "ba"}, {"ba", "ab"}} {
		t.Run(tc.first+"-"+tc.second, func(t *testing.T) {
			s := newTestServer(t, nil)
			pairTool(t, s, func(req *ToolRequest) string {
				if req.Round() > 1 {
					return tc.second
				}
				return tc.first
			})
			res, err := pairClient(t, s).CallTool(testContext(t), "pair", nil)
			if tc.first != tc.second {
				var e *mcptest.Error
				if !errors.As(err, &e) || e.Status != 200 || e.Code != mcp.InternalError || e.Round != 2 {
					t.Fatalf("error %v, want -32603 (HTTP 200) in round 2", err)
				}
				if !strings.Contains(e.Message, "different order") || !strings.Contains(e.Message, "goroutines") {
					t.Fatalf("message %q does not say what went wrong", e.Message)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantPairRounds(t, res.Exchange)
			if text := res.Text(); text != `a={"ok":true} b={"ok":false}` || res.IsError {
				t.Fatalf("round 2: %q (isError %v)", text, res.IsError)
			}
		})
	}
}
