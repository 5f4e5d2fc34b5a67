package legacy

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// FuzzParseQuestionID: an answer's id is the client's; whatever it is,
// parseQuestionID either refuses it or returns the parts questionID
// joined, and never panics.
func FuzzParseQuestionID(f *testing.F) {
	_, k := questionID(callKey("s", mcp.StringID("c1")), randomID(""))
	f.Add(`"` + k + `"`)
	f.Add(`"AAAAAAAAAAAAAAAA:BBBBBBBBBBBBBBBB.1"`)
	f.Add(`"AAAAAAAAAAAAAAAA.1"`)
	f.Add(`7`)
	f.Add(`"AAAAAAAAAAAAAAAA:BBBBBBBBBBBBBBBB.-1"`)
	f.Fuzz(func(t *testing.T, raw string) {
		var id mcp.ID
		if id.UnmarshalJSON([]byte(raw)) != nil {
			return
		}
		key, call, inst, ok := parseQuestionID(id)
		if !ok {
			return
		}
		if !strings.HasPrefix(key, call+":"+inst+".") || len(call) != instanceIDLen || len(inst) != instanceIDLen {
			t.Fatalf("%s: parts %q %q %q", raw, key, call, inst)
		}
	})
}

// A question's id parses back into its parts; an id of the older forms
// does not.
func TestQuestionID(t *testing.T) {
	call, inst := callKey("sid", mcp.IntID(3)), randomID("")
	id, key := questionID(call, inst)
	k, c, i, ok := parseQuestionID(id)
	if !ok || k != key || c != call || i != inst {
		t.Fatalf("parse(%s) = %q %q %q %v", id.Raw(), k, c, i, ok)
	}
	for _, old := range []mcp.ID{mcp.IntID(1), mcp.StringID(inst + ".12")} {
		if _, _, _, ok := parseQuestionID(old); ok {
			t.Errorf("parse(%s) took an id of the older form", old.Raw())
		}
	}
	if callKey("sid", mcp.IntID(3)) != call || callKey("sid", mcp.StringID("3")) == call {
		t.Error("callKey is not a function of the session and the id's JSON text")
	}
}

// A question waits in at most 4 KiB of store (issue 32): the record of a
// call parked on a two-field form (a name, then an email, as
// examples/everything's onboard_user asks), its park, and the question
// kept on its stream, measured in the memory stores.
func TestWaitingCallStoreSize(t *testing.T) {
	h := newAdapter(&Options{HoldFor: -1})
	srv, err := server.New(mcp.Implementation{Name: "size", Version: "1"}, &server.Options{Legacy: h, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	name, err := elicit.NewSchema(elicit.String("name").Title("Your name").MinLength(1).Required())
	if err != nil {
		t.Fatal(err)
	}
	email, err := elicit.NewSchema(elicit.String("email").Title("Your email").Format(elicit.FormatEmail).Required())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.AddTool(server.Tool{Name: "onboard"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if _, err := req.CreateFormElicitation(ctx, "What is your name?", name); err != nil {
			return nil, err
		}
		if _, err := req.CreateFormElicitation(ctx, "Thanks, Ada Lovelace. What is your email?", email); err != nil {
			return nil, err
		}
		return server.TextResult("welcome"), nil
	}); err != nil {
		t.Fatal(err)
	}
	mem := h.store.(*memoryStore)
	events := h.events.(*memoryEventStore)
	var sizes []int
	measure := func() {
		mem.mu.Lock()
		n := 0
		for _, w := range mem.waits {
			n += len(w.call)
		}
		for k, c := range mem.calls {
			n += len(k) + len(c.sid) + len(c.answer)
		}
		mem.mu.Unlock()
		events.mu.Lock()
		for _, s := range events.streams {
			for _, e := range s.events {
				n += len(e.Pos) + len(e.Msg)
			}
		}
		events.mu.Unlock()
		sizes = append(sizes, n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := mcptest.New(mcptest.Handler(srv), &mcptest.Options{Protocol: mcp.LegacyProtocolVersion,
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			time.Sleep(100 * time.Millisecond) // parked by now (HoldFor negative)
			measure()
			if strings.HasPrefix(req.Message, "What") {
				return &elicit.Result{Action: elicit.ActionAccept, Content: json.RawMessage(`{"name":"Ada Lovelace"}`)}, nil
			}
			return &elicit.Result{Action: elicit.ActionAccept, Content: json.RawMessage(`{"email":"ada@example.com"}`)}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := c.CallTool(ctx, "onboard", nil)
	if err != nil || res.Text() != "welcome" {
		t.Fatalf("onboard: %v, %v", res, err)
	}
	if len(sizes) != 2 || sizes[0] == 0 {
		t.Fatalf("measured %v, want two questions parked", sizes)
	}
	for i, n := range sizes {
		if n > 4096 {
			t.Errorf("question %d waits in %d bytes of store, over 4 KiB", i+1, n)
		}
	}
	t.Logf("store per waiting call: %d bytes at its first question, %d at its second (record, park, kept events)", sizes[0], sizes[1])
}
