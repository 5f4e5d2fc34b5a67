package legacy_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
	f := newFixture(t, srv)
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
			if !m.IsRequest() {
				t.Fatalf("want a request, got %s", m.Raw)
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

// A stdio session whose client stops reading stdout blocks the session's
// change notification on its write; the server's other work does not wait
// for it: AddTool and the other publishers return, and the notification
// goes out once the client reads again.
func TestStdioBlockedStdoutHoldsUpNoChange(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "t0", func(context.Context, *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("x"), nil
	})
	settle(t, srv) // t0's announcement must not reach the session
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW) }()
	t.Cleanup(func() {
		_ = inW.Close()
		go func() { _, _ = io.Copy(io.Discard, outR) }() // let pending writes finish
		select {
		case <-done:
		case <-time.After(waitLimit):
			t.Error("ServeStdio did not return after end of input")
		}
		_ = outR.Close()
	})
	out := bufio.NewReader(outR)
	readLine := func() message {
		t.Helper()
		lines := make(chan []byte, 1)
		go func() {
			b, _ := out.ReadBytes('\n')
			lines <- b
		}()
		select {
		case b := <-lines:
			return parseMessage(t, b)
		case <-time.After(waitLimit):
			t.Fatal("no line on stdout within the wait limit")
		}
		return message{}
	}
	send := func(v any) {
		t.Helper()
		if _, err := inW.Write(append(mustJSON(t, v), '\n')); err != nil {
			t.Fatal(err)
		}
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initParams(legacyVersion, allCaps)})
	if m := readLine(); !m.IsResponse() || m.Error != nil {
		t.Fatalf("initialize: %s", m.Raw)
	}
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})

	// Nobody reads stdout now: the first change's notification blocks on
	// its write (an io.Pipe has no buffer).
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		for i := range 3 {
			addTool(t, srv, fmt.Sprintf("t%d", i+1), func(context.Context, *server.ToolRequest) (*server.ToolResult, error) {
				return server.TextResult("x"), nil
			})
		}
		srv.NotifyResourceUpdated("file:///a")
		if err := srv.AddPrompt(server.Prompt{Name: "p"}, func(context.Context, *server.PromptRequest) (*server.PromptResult, error) {
			return &server.PromptResult{}, nil
		}); err != nil {
			t.Error(err)
		}
	}()
	select {
	case <-returned:
	case <-time.After(waitLimit):
		t.Fatalf("changes stayed stuck behind a blocked stdout for %v", waitLimit)
	}
	// The client reads again: the notification comes out.
	if m := readLine(); m.Method != "notifications/tools/list_changed" {
		t.Fatalf("want tools/list_changed, got %s", m.Raw)
	}
}
