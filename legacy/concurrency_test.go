package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// Goroutines of one handler make blocking calls at once on a 2025-11-25
// session: each is a real round trip on the call's SSE stream, all are
// outstanding together, and each goroutine gets its own answer whatever
// order the client answers in. Run with -race.
func TestConcurrentBlockingCalls(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "trio", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var (
			wg    sync.WaitGroup
			a, b  *elicit.Result
			roots string
			errs  [3]error
		)
		wg.Go(func() { a, errs[0] = req.CreateFormElicitation(ctx, "a?", nameSchema(t)) })
		wg.Go(func() { b, errs[1] = req.CreateFormElicitation(ctx, "b?", nameSchema(t)) })
		wg.Go(func() {
			r, err := req.ListRoots(ctx)
			if errs[2] = err; err == nil && len(r.Roots) == 1 {
				roots = r.Roots[0].URI
			}
		})
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("a=%s b=%s roots=%s", a.Content, b.Content, roots)), nil
	})
	f := newFixture(t, srv, nil)
	c := connect(t, f, allCaps)

	for round := range 5 {
		id := fmt.Sprintf("call-%d", round)
		s := c.request(id, "tools/call", toolCall("trio", nil))
		// All three requests arrive before any is answered: they are in
		// flight at once.
		var reqs []message
		var seen []string
		for range 3 {
			m := s.next()
			if !m.isRequest() {
				t.Fatalf("want a request, got %s", m.raw)
			}
			reqs = append(reqs, m)
			what := m.Method
			if m.Method == "elicitation/create" {
				what = params(t, m)["message"].(string)
			}
			seen = append(seen, what)
		}
		slices.Sort(seen)
		if strings.Join(seen, ",") != "a?,b?,roots/list" {
			t.Fatalf("requests on the stream: %v", seen)
		}
		// Answered in the opposite order of arrival.
		for _, m := range slices.Backward(reqs) {
			switch m.Method {
			case "roots/list":
				c.answer(m, map[string]any{"roots": []any{map[string]any{"uri": "file:///r", "name": "r"}}})
			default:
				c.answer(m, map[string]any{"action": "accept", "content": map[string]any{"name": "for " + params(t, m)["message"].(string)}})
			}
		}
		if text, isErr := toolText(t, s.result(fmt.Sprintf("%q", id))); text != `a={"name":"for a?"} b={"name":"for b?"} roots=file:///r` || isErr {
			t.Fatalf("result %q (isError %v)", text, isErr)
		}
	}
}
