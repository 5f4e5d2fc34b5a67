package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/jsonrpc"
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

// answerByMessage answers each input request of r with accept(ok), where
// ok is what answers maps the request's message to.
func answerByMessage(t *testing.T, r irr, answers map[string]bool) map[string]any {
	t.Helper()
	out := make(map[string]any, len(r.InputRequests))
	for key, raw := range r.InputRequests {
		var ir struct {
			Params struct {
				Message string `json:"message"`
			} `json:"params"`
		}
		if err := json.Unmarshal(raw, &ir); err != nil {
			t.Fatalf("input request %s: %v", key, err)
		}
		ok, known := answers[ir.Params.Message]
		if !known {
			t.Fatalf("input request %s asks %q", key, ir.Params.Message)
		}
		out[key] = accept(ok)
	}
	return out
}

// Two goroutines of one handler ask at once on the stateless protocol.
// Whatever order the scheduler gives them, on every round, each goroutine
// gets the answer to its own question or the request fails with a clear
// error naming the order; it never gets the other's answer. Run with
// -race: the Round is shared by both goroutines.
func TestConcurrentBlockingCallsModern(t *testing.T) {
	s := newTestServer(t, nil)
	pairTool(t, s, nil)
	answers := map[string]bool{"a?": true, "b?": false}
	completed, refused := 0, 0
	for i := range 40 {
		r1 := wantInputRequired(t, do(t, s, toolCall(i, "pair", nil).caps(formCaps)), fmt.Sprint(i), "baton:0", "baton:1")
		rec := do(t, s, toolCall(i, "pair", nil).caps(formCaps).retry(r1.RequestState, answerByMessage(t, r1, answers)))
		r := parseResponse(t, rec.Body.Bytes())
		if r.Error != nil {
			if r.Error.Code != jsonrpc.InternalError || !strings.Contains(r.Error.Message, "different order") {
				t.Fatalf("round 2: error %d %q, want a complete result or an error naming the order", r.Error.Code, r.Error.Message)
			}
			refused++
			continue
		}
		if text, isErr := toolText(t, completeResult(t, rec, fmt.Sprint(i))); text != `a={"ok":true} b={"ok":false}` || isErr {
			t.Fatalf("round 2: %q (isError %v): an answer reached the wrong question", text, isErr)
		}
		completed++
	}
	t.Logf("%d completed, %d refused as reordered", completed, refused)
}

// The same, with the order forced: the same order on both rounds completes
// with each goroutine's own answer; the opposite order fails clearly, with
// -32603 naming the order, and never hands an answer to the wrong question.
func TestConcurrentBlockingCallsReordered(t *testing.T) {
	answers := map[string]bool{"a?": true, "b?": false}
	for _, tc := range []struct{ first, second string }{{"ab", "ab"}, {"ba", "ba"}, {"ab", "ba"}, {"ba", "ab"}} {
		t.Run(tc.first+"-"+tc.second, func(t *testing.T) {
			s := newTestServer(t, nil)
			pairTool(t, s, func(req *ToolRequest) string {
				if req.Round() > 1 {
					return tc.second
				}
				return tc.first
			})
			r1 := wantInputRequired(t, do(t, s, toolCall(1, "pair", nil).caps(formCaps)), "1", "baton:0", "baton:1")
			rec := do(t, s, toolCall(2, "pair", nil).caps(formCaps).retry(r1.RequestState, answerByMessage(t, r1, answers)))
			if tc.first != tc.second {
				e := wantError(t, rec, 200, jsonrpc.InternalError, "2")
				if !strings.Contains(e.Message, "different order") || !strings.Contains(e.Message, "goroutines") {
					t.Fatalf("message %q does not say what went wrong", e.Message)
				}
				return
			}
			if text, isErr := toolText(t, completeResult(t, rec, "2")); text != `a={"ok":true} b={"ok":false}` || isErr {
				t.Fatalf("round 2: %q (isError %v)", text, isErr)
			}
		})
	}
}
