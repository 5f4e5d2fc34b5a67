package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

// The README's quick start is this program, byte for byte: the first Go
// block of its "Quick start" section equals main.go.
func TestREADMEShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	program, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := bytes.Cut(readme, []byte("\n## Quick start\n"))
	if !ok {
		t.Fatal(`README.md has no "## Quick start" section`)
	}
	_, block, ok := bytes.Cut(section, []byte("\n```go\n"))
	if !ok {
		t.Fatal("the Quick start section has no ```go block")
	}
	block, _, ok = bytes.Cut(block, []byte("\n```\n"))
	if !ok {
		t.Fatal("the Quick start's ```go block does not end")
	}
	block = append(block, '\n')
	if !bytes.Equal(block, program) {
		rl, pl := strings.Split(string(block), "\n"), strings.Split(string(program), "\n")
		for i := 0; i < max(len(rl), len(pl)); i++ {
			var r, p string
			if i < len(rl) {
				r = rl[i]
			}
			if i < len(pl) {
				p = pl[i]
			}
			if r != p {
				t.Fatalf("README.md's quick start and main.go differ from line %d:\nREADME:  %q\nmain.go: %q", i+1, r, p)
			}
		}
	}
}

// orderClient answers the size question with size and the name question
// with name; "decline" or "cancel" refuses that question so.
func orderClient(t *testing.T, size, name string) *mcptest.Client {
	t.Helper()
	srv, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			switch {
			case strings.HasPrefix(req.Message, "What size of "):
				return answer("size", size)
			case strings.HasSuffix(req.Message, "Whose name goes on the cup?"):
				return answer("name", name)
			}
			return nil, errors.New("unexpected question " + req.Message)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answer accepts value for field, or declines or cancels.
func answer(field, value string) (*elicit.Result, error) {
	switch value {
	case "decline":
		return mcptest.Decline()
	case "cancel":
		return mcptest.Cancel()
	}
	return mcptest.Accept(map[string]any{field: value})
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestOrderCoffee(t *testing.T) {
	res, err := orderClient(t, "large", "Ada").CallTool(testContext(t), "order_coffee", map[string]any{"drink": "latte"})
	if err != nil {
		t.Fatal(err)
	}
	var got Receipt
	if err := res.Decode(&got); err != nil || res.IsError || got != (Receipt{Drink: "latte", Size: "large", Name: "Ada"}) {
		t.Fatalf("result %s (isError %v, %v)", res.StructuredContent, res.IsError, err)
	}
	rounds := res.Exchange.Rounds
	if len(rounds) != 3 {
		t.Fatalf("%d requests, want 3 (two questions, then the result)", len(rounds))
	}
	for i, want := range []string{"What size of latte?", "A large latte. Whose name goes on the cup?"} {
		if irs := rounds[i].InputRequests; len(irs) != 1 || irs[0].Elicitation == nil || irs[0].Elicitation.Message != want {
			t.Errorf("request %d asks %+v, want %q", i+1, irs, want)
		}
	}
}

// A declined question and a cancelled one end the order with different
// texts (elicit.ErrDeclined, elicit.ErrCancelled).
func TestOrderCoffeeDeclinedOrCancelled(t *testing.T) {
	for _, tc := range []struct {
		size, name string
		requests   int
		want       string
	}{
		{"decline", "Ada", 2, "no coffee ordered: you declined"},
		{"cancel", "Ada", 2, "no coffee ordered: you cancelled"},
		{"small", "decline", 3, "no coffee ordered: you declined"},
		{"small", "cancel", 3, "no coffee ordered: you cancelled"},
	} {
		res, err := orderClient(t, tc.size, tc.name).CallTool(testContext(t), "order_coffee", map[string]any{"drink": "latte"})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || res.Text() != tc.want || len(res.Exchange.Rounds) != tc.requests {
			t.Errorf("size %q, name %q: %q (isError %v) after %d requests, want %q after %d", tc.size, tc.name, res.Text(), res.IsError, len(res.Exchange.Rounds), tc.want, tc.requests)
		}
	}
}

// The program serves the endpoint at /mcp only: every other path is 404.
func TestServesOnlyMCP(t *testing.T) {
	srv, err := newServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	mux := newMux(srv)
	for _, tc := range []struct {
		path   string
		status int
	}{{"/mcp", http.StatusOK}, {"/", http.StatusNotFound}, {"/anything", http.StatusNotFound}, {"/mcp/x", http.StatusNotFound}} {
		c, err := mcptest.New(mcptest.HandlerAt("http://localhost"+tc.path, mux), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(testContext(t), "tools/list", nil)
		if err != nil || resp.Status != tc.status {
			t.Errorf("%s: %v, HTTP %d, want %d", tc.path, err, resp.Status, tc.status)
		}
	}
}
