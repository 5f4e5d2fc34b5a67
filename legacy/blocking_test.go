package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// blockingTools registers tools written in the blocking style. Each sends
// what its call returned to out and answers with a text describing it.
func blockingTools(t *testing.T, srv *server.Server, out chan<- outcome, opts ...server.AskOption) {
	t.Helper()
	schema := nameSchema(t)
	report := func(ctx context.Context, start time.Time, res any, err error) {
		out <- outcome{res: res, err: err, ctxErr: ctx.Err(), elapsed: time.Since(start)}
	}
	addTool(t, srv, "ask_name", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		start := time.Now()
		r, err := req.CreateFormElicitation(ctx, "What is your name?", schema, opts...)
		report(ctx, start, r, err)
		if err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("action=%s content=%s", r.Action, r.Content)), nil
	})
	addTool(t, srv, "ask_url", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		start := time.Now()
		r, err := req.CreateURLElicitation(ctx, "el-42", "Please sign in", "https://example.com/signin", opts...)
		report(ctx, start, r, err)
		if err != nil {
			return nil, err
		}
		if err := req.NotifyElicitationComplete(ctx, "el-42"); err != nil {
			return nil, err
		}
		return server.TextResult("url " + string(r.Action)), nil
	})
	addTool(t, srv, "sample", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		start := time.Now()
		r, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("Capital of France?")}, MaxTokens: 50}, opts...)
		report(ctx, start, r, err)
		if err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("%s (%s)", r.Text(), r.Model)), nil
	})
	addTool(t, srv, "roots", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		start := time.Now()
		r, err := req.ListRoots(ctx, opts...)
		report(ctx, start, r, err)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, root := range r.Roots {
			uris = append(uris, root.URI)
		}
		return server.TextResult(strings.Join(uris, ",")), nil
	})
}

const allCaps = `{"elicitation":{"form":{},"url":{}},"sampling":{},"roots":{"listChanged":true}}`

func TestBlockingElicitation(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	t.Run("accept", func(t *testing.T) {
		s := c.request("call-1", "tools/call", toolCall("ask_name", nil))
		if s.status != http.StatusOK || s.ctype != "text/event-stream" {
			t.Fatalf("tools/call: HTTP %d %q, want 200 SSE", s.status, s.ctype)
		}
		req := s.nextRequest("elicitation/create")
		p := params(t, req)
		if p["message"] != "What is your name?" || p["mode"] != "form" {
			t.Errorf("elicitation params = %s", req.Params)
		}
		if _, ok := p["elicitationId"]; ok {
			t.Errorf("form elicitation with elicitationId: %s", req.Params)
		}
		schema, _ := p["requestedSchema"].(map[string]any)
		if schema["type"] != "object" || schema["properties"].(map[string]any)["name"] == nil {
			t.Errorf("requestedSchema = %v", schema)
		}
		c.answer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "extra": "ignored"}})
		o := recv(t, out, "the handler")
		if o.err != nil {
			t.Fatalf("handler error: %v", o.err)
		}
		if text, isErr := toolText(t, s.result(`"call-1"`)); text != `action=accept content={"name":"Ada"}` || isErr {
			t.Errorf("result = %q (isError %v)", text, isErr)
		}
		if rest := s.end(); len(rest) > 0 {
			t.Errorf("messages after the result: %s", rest[0].Raw)
		}
	})

	for _, action := range []string{"decline", "cancel"} {
		t.Run(action, func(t *testing.T) {
			s := c.request(action, "tools/call", toolCall("ask_name", nil))
			c.answer(s.nextRequest("elicitation/create"), map[string]any{"action": action})
			if o := recv(t, out, "the handler"); o.err != nil {
				t.Fatalf("%s is a result, not an error: %v", action, o.err)
			}
			if text, _ := toolText(t, s.result(fmt.Sprintf("%q", action))); text != "action="+action+" content=" {
				t.Errorf("result = %q", text)
			}
		})
	}

	t.Run("answers that fail the schema", func(t *testing.T) {
		for i, bad := range []any{
			map[string]any{"action": "accept", "content": map[string]any{"name": 5}},
			map[string]any{"action": "accept", "content": map[string]any{}},
			map[string]any{"action": "accept"},
			map[string]any{"action": "maybe"},
			map[string]any{"action": "decline", "content": map[string]any{"name": "x"}},
			"accept",
		} {
			id := fmt.Sprintf("bad-%d", i)
			s := c.request(id, "tools/call", toolCall("ask_name", nil))
			c.answer(s.nextRequest("elicitation/create"), bad)
			o := recv(t, out, "the handler")
			if o.err == nil || !strings.Contains(o.err.Error(), "elicitation/create: the client's answer is invalid") {
				t.Errorf("answer %v: handler error = %v", bad, o.err)
			}
			// A plain error from the handler is an isError result.
			if _, isErr := toolText(t, s.result(fmt.Sprintf("%q", id))); !isErr {
				t.Errorf("answer %v: the tool result is not isError", bad)
			}
		}
	})

	t.Run("client error", func(t *testing.T) {
		s := c.request("err", "tools/call", toolCall("ask_name", nil))
		c.answerError(s.nextRequest("elicitation/create"), -32601, "Method not found")
		o := recv(t, out, "the handler")
		var ce *server.ClientError
		if !errors.As(o.err, &ce) {
			t.Fatalf("handler error = %T %v, want *server.ClientError", o.err, o.err)
		}
		if ce.Method != "elicitation/create" || ce.Err.Code != -32601 || ce.Err.Message != "Method not found" {
			t.Errorf("ClientError = %+v %+v", ce, ce.Err)
		}
		s.result(`"err"`)
	})

	t.Run("url mode", func(t *testing.T) {
		s := c.request("url", "tools/call", toolCall("ask_url", nil))
		req := s.nextRequest("elicitation/create")
		p := params(t, req)
		if p["mode"] != "url" || p["elicitationId"] != "el-42" || p["url"] != "https://example.com/signin" || p["message"] != "Please sign in" {
			t.Errorf("url elicitation params = %s", req.Params)
		}
		c.answer(req, map[string]any{"action": "accept"})
		if o := recv(t, out, "the handler"); o.err != nil {
			t.Fatalf("handler error: %v", o.err)
		}
		done := s.next()
		if done.Method != "notifications/elicitation/complete" || params(t, done)["elicitationId"] != "el-42" {
			t.Errorf("want notifications/elicitation/complete for el-42, got %s", done.Raw)
		}
		if text, _ := toolText(t, s.result(`"url"`)); text != "url accept" {
			t.Errorf("result = %q", text)
		}
	})

	t.Run("answers to unknown ids are accepted and ignored", func(t *testing.T) {
		c.answer(message{ID: json.RawMessage("987654")}, map[string]any{"action": "accept"})
		c.answerError(message{ID: json.RawMessage(`"nope"`)}, -1, "x")
	})
}

func TestBlockingSamplingAndRoots(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	t.Run("sampling", func(t *testing.T) {
		s := c.request(1, "tools/call", toolCall("sample", nil))
		req := s.nextRequest("sampling/createMessage")
		p := params(t, req)
		if p["maxTokens"] != float64(50) || !strings.Contains(string(req.Params), "Capital of France?") {
			t.Errorf("sampling params = %s", req.Params)
		}
		c.answer(req, map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m-1", "stopReason": "endTurn"})
		if o := recv(t, out, "the handler"); o.err != nil {
			t.Fatalf("handler error: %v", o.err)
		}
		if text, _ := toolText(t, s.result("1")); text != "Paris (m-1)" {
			t.Errorf("result = %q", text)
		}
	})
	t.Run("sampling answer without a model", func(t *testing.T) {
		s := c.request(2, "tools/call", toolCall("sample", nil))
		c.answer(s.nextRequest("sampling/createMessage"), map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}})
		o := recv(t, out, "the handler")
		if o.err == nil || !strings.Contains(o.err.Error(), "sampling/createMessage") || !strings.Contains(o.err.Error(), "model") {
			t.Errorf("handler error = %v", o.err)
		}
		s.result("2")
	})
	t.Run("roots", func(t *testing.T) {
		s := c.request(3, "tools/call", toolCall("roots", nil))
		req := s.nextRequest("roots/list")
		t.Logf("roots/list request on the wire: %s", req.Raw)
		c.answer(req, map[string]any{"roots": []any{map[string]any{"uri": "file:///a", "name": "a"}, map[string]any{"uri": "file:///b"}}})
		if o := recv(t, out, "the handler"); o.err != nil {
			t.Fatalf("handler error: %v", o.err)
		}
		if text, _ := toolText(t, s.result("3")); text != "file:///a,file:///b" {
			t.Errorf("result = %q", text)
		}
	})
	t.Run("roots answer that is not file://", func(t *testing.T) {
		s := c.request(4, "tools/call", toolCall("roots", nil))
		c.answer(s.nextRequest("roots/list"), map[string]any{"roots": []any{map[string]any{"uri": "https://a"}}})
		o := recv(t, out, "the handler")
		if o.err == nil || !strings.Contains(o.err.Error(), "file://") {
			t.Errorf("handler error = %v", o.err)
		}
		s.result("4")
	})
	t.Run("roots client error", func(t *testing.T) {
		s := c.request(5, "tools/call", toolCall("roots", nil))
		c.answerError(s.nextRequest("roots/list"), -32603, "boom")
		var ce *server.ClientError
		if o := recv(t, out, "the handler"); !errors.As(o.err, &ce) || ce.Method != "roots/list" || ce.Err.Code != -32603 {
			t.Errorf("handler error = %v", o.err)
		}
		s.result("5")
	})
}

// TestConcurrentCallsInOneSession checks that answers reach the right call
// when several wait at once, answered out of order.
func TestConcurrentCallsInOneSession(t *testing.T) {
	srv := newServer(t)
	schema := nameSchema(t)
	addTool(t, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		r, err := req.CreateFormElicitation(ctx, "Name for "+req.ID.String(), schema)
		if err != nil {
			return nil, err
		}
		var v struct {
			Name string `json:"name"`
		}
		if err := r.Decode(&v); err != nil {
			return nil, err
		}
		return server.TextResult(v.Name), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	const n = 5
	streams := make([]*stream, n)
	reqs := make([]message, n)
	for i := range n {
		streams[i] = c.request(i, "tools/call", toolCall("ask", nil))
		reqs[i] = streams[i].nextRequest("elicitation/create")
		if want := fmt.Sprintf("Name for %d", i); params(t, reqs[i])["message"] != want {
			t.Errorf("call %d got %s", i, reqs[i].Params)
		}
	}
	for i := n - 1; i >= 0; i-- {
		c.answer(reqs[i], map[string]any{"action": "accept", "content": map[string]any{"name": fmt.Sprintf("n%d", i)}})
	}
	for i := range n {
		if text, _ := toolText(t, streams[i].result(fmt.Sprint(i))); text != fmt.Sprintf("n%d", i) {
			t.Errorf("call %d = %q", i, text)
		}
	}
}

func TestBlockingTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, tc := range []struct {
		name    string
		opts    *legacy.Options
		callOpt []server.AskOption
	}{
		{"per-call WithTimeout", &legacy.Options{CallTimeout: 10 * time.Second, KeepAlive: 10 * time.Millisecond}, []server.AskOption{server.WithTimeout(timeout)}},
		{"server-wide CallTimeout", &legacy.Options{CallTimeout: timeout, KeepAlive: 10 * time.Millisecond}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newLegacyServer(t, tc.opts, nil)
			out := make(chan outcome, 1)
			blockingTools(t, srv, out, tc.callOpt...)
			f := newFixture(t, srv)
			c := connect(t, f, allCaps)

			for i, tool := range []struct{ name, method string }{
				{"ask_name", "elicitation/create"},
				{"sample", "sampling/createMessage"},
				{"roots", "roots/list"},
			} {
				s := c.request(i, "tools/call", toolCall(tool.name, nil))
				req := s.nextRequest(tool.method)
				o := recv(t, out, "the handler")
				if !errors.Is(o.err, server.ErrTimeout) {
					t.Fatalf("%s: handler error = %v, want ErrTimeout", tool.name, o.err)
				}
				if !strings.Contains(o.err.Error(), tool.method) {
					t.Errorf("%s: error %q does not name %s", tool.name, o.err, tool.method)
				}
				if o.elapsed < timeout || o.elapsed > timeout+time.Second {
					t.Errorf("%s: waited %v, want about %v", tool.name, o.elapsed, timeout)
				}
				// The client is told to drop the nested request, on the
				// same stream, before the final result.
				m := s.next()
				if m.Method != "notifications/cancelled" || m.ID != nil {
					t.Fatalf("%s: want notifications/cancelled, got %s", tool.name, m.Raw)
				}
				p := params(t, m)
				if string(mustJSON(t, p["requestId"])) != string(req.ID) || !strings.Contains(fmt.Sprint(p["reason"]), "timed out") {
					t.Errorf("%s: cancelled params %s, want requestId %s", tool.name, m.Params, req.ID)
				}
				if _, isErr := toolText(t, s.result(fmt.Sprint(i))); !isErr {
					t.Errorf("%s: result not isError", tool.name)
				}
				if s.comments() == 0 {
					t.Errorf("%s: no keep-alive comment while waiting (KeepAlive 10ms)", tool.name)
				}
				// A late answer is accepted and goes nowhere.
				c.answer(req, map[string]any{"action": "accept"})
			}
		})
	}
}

func TestCancelOriginalRequest(t *testing.T) {
	const callTimeout = 5 * time.Second
	srv := newLegacyServer(t, &legacy.Options{CallTimeout: callTimeout}, nil)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	t.Run("notifications/cancelled", func(t *testing.T) {
		s := c.request("orig-1", "tools/call", toolCall("ask_name", nil))
		req := s.nextRequest("elicitation/create")
		sent := time.Now()
		c.notify("notifications/cancelled", map[string]any{"requestId": "orig-1", "reason": "user aborted"})
		o := recv(t, out, "the handler")
		if since := time.Since(sent); since > callTimeout/5 {
			t.Errorf("the wait ended %v after the cancel; want at once", since)
		}
		if o.err == nil || errors.Is(o.err, server.ErrTimeout) {
			t.Fatalf("handler error = %v, want a cancellation", o.err)
		}
		if !strings.Contains(o.err.Error(), "cancelled") || !strings.Contains(o.err.Error(), "user aborted") {
			t.Errorf("handler error %q does not carry the cancellation cause", o.err)
		}
		if o.ctxErr != context.Canceled {
			t.Errorf("ctx.Err() = %v, want context.Canceled", o.ctxErr)
		}
		// Nothing answers orig-1; the nested request is withdrawn.
		rest := s.end()
		for _, m := range rest {
			if m.IsResponse() {
				t.Errorf("a response was written for the cancelled request: %s", m.Raw)
			}
		}
		if len(rest) != 1 || rest[0].Method != "notifications/cancelled" || string(mustJSON(t, params(t, rest[0])["requestId"])) != string(req.ID) {
			t.Errorf("after the cancel the stream carried %d messages, want only notifications/cancelled for %s", len(rest), req.ID)
		}
		// The session goes on.
		if got := c.call("after", "ping", nil); string(got) != "{}" {
			t.Errorf("ping = %s", got)
		}
	})

	t.Run("closing the POST", func(t *testing.T) {
		s := c.request("orig-2", "tools/call", toolCall("ask_name", nil))
		req := s.nextRequest("elicitation/create")
		sent := time.Now()
		s.close()
		o := recv(t, out, "the handler")
		if since := time.Since(sent); since > callTimeout/5 {
			t.Errorf("the wait ended %v after the close; want at once", since)
		}
		if !errors.Is(o.err, context.Canceled) || errors.Is(o.err, server.ErrTimeout) {
			t.Errorf("handler error = %v, want context.Canceled", o.err)
		}
		if o.ctxErr != context.Canceled {
			t.Errorf("ctx.Err() = %v", o.ctxErr)
		}
		c.answer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "late"}})
		if got := c.call("after2", "ping", nil); string(got) != "{}" {
			t.Errorf("ping = %s", got)
		}
	})

	t.Run("cancelling an unknown id changes nothing", func(t *testing.T) {
		c.notify("notifications/cancelled", map[string]any{"requestId": "never-sent"})
		c.notify("notifications/cancelled", map[string]any{})
		c.notify("notifications/cancelled", nil)
	})
}

func TestMissingCapability(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	f := newFixture(t, srv)

	for _, tc := range []struct {
		name, caps, tool string
		wantNames        string
		check            func(r mcp.ClientCapabilities) bool
	}{
		{"form without elicitation", `{"sampling":{},"roots":{}}`, "ask_name", "elicitation", func(r mcp.ClientCapabilities) bool { return r.Elicitation != nil && r.Elicitation.URL == nil }},
		{"url with only form", `{"elicitation":{"form":{}}}`, "ask_url", "elicitation.url", func(r mcp.ClientCapabilities) bool { return r.Elicitation != nil && r.Elicitation.URL != nil }},
		{"url with empty elicitation (form only)", `{"elicitation":{}}`, "ask_url", "elicitation.url", func(r mcp.ClientCapabilities) bool { return r.Elicitation != nil && r.Elicitation.URL != nil }},
		{"form with only url", `{"elicitation":{"url":{}}}`, "ask_name", "elicitation", func(r mcp.ClientCapabilities) bool { return r.Elicitation != nil }},
		{"sampling without sampling", `{"elicitation":{}}`, "sample", "sampling", func(r mcp.ClientCapabilities) bool { return r.Sampling != nil }},
		{"roots without roots", `{"elicitation":{},"sampling":{}}`, "roots", "roots", func(r mcp.ClientCapabilities) bool { return r.Roots != nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connect(t, f, tc.caps)
			get := c.get("text/event-stream")
			s := c.request(1, "tools/call", toolCall(tc.tool, nil))
			o := recv(t, out, "the handler")
			var mc *mcp.MissingCapabilityError
			if !errors.As(o.err, &mc) {
				t.Fatalf("handler error = %T %v, want *mcp.MissingCapabilityError", o.err, o.err)
			}
			if !strings.Contains(mc.Error(), "client capability "+tc.wantNames) || !tc.check(mc.Required) {
				t.Errorf("error %q (required %+v), want it to name %s", mc.Error(), mc.Required, tc.wantNames)
			}
			// Nothing was sent to the client: the response is plain JSON
			// (the stream never switched to SSE) and is the error itself.
			if s.ctype != "application/json" {
				t.Errorf("Content-Type = %q: something was streamed before the response", s.ctype)
			}
			e := s.rpcErr("1")
			if e.Code != -32021 {
				t.Errorf("code = %d, want -32021", e.Code)
			}
			if rest := s.end(); len(rest) > 0 {
				t.Errorf("more messages: %s", rest[0].Raw)
			}
			get.none("GET stream after a refused client request")
		})
	}
}

// TestAskAllIsConcurrent checks that AskAll on a legacy session sends
// every question before it waits for any answer, and returns the answers
// in the order asked.
func TestAskAllIsConcurrent(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	first := form(t, "First?", elicit.String("a").Required())
	second := form(t, "Second?", elicit.Integer("b").Required())
	addTool(t, srv, "both", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.AskAll(ctx, []mrtr.InputRequest{mrtr.ElicitRequest(first), mrtr.ElicitRequest(second)})
		out <- outcome{res: res, err: err}
		if err != nil {
			return nil, err
		}
		return server.TextResult(string(res[0].Elicit.Content) + string(res[1].Elicit.Content)), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)

	s := c.request(1, "tools/call", toolCall("both", nil))
	q1, q2 := s.nextRequest("elicitation/create"), s.nextRequest("elicitation/create")
	if params(t, q1)["message"] != "First?" || params(t, q2)["message"] != "Second?" {
		t.Fatalf("questions = %s, %s", q1.Params, q2.Params)
	}
	c.answer(q2, map[string]any{"action": "accept", "content": map[string]any{"b": 2}})
	s.none("with one of two answers")
	c.answer(q1, map[string]any{"action": "accept", "content": map[string]any{"a": "x"}})
	if o := recv(t, out, "the handler"); o.err != nil {
		t.Fatalf("handler error: %v", o.err)
	}
	if text, _ := toolText(t, s.result("1")); text != `{"a":"x"}{"b":2}` {
		t.Errorf("result = %q", text)
	}

	// One invalid answer fails the whole call, naming the method.
	s = c.request(2, "tools/call", toolCall("both", nil))
	q1, q2 = s.nextRequest("elicitation/create"), s.nextRequest("elicitation/create")
	c.answer(q1, map[string]any{"action": "accept", "content": map[string]any{"a": "x"}})
	c.answer(q2, map[string]any{"action": "accept", "content": map[string]any{"b": "two"}})
	if o := recv(t, out, "the handler"); o.err == nil || !strings.Contains(o.err.Error(), "elicitation/create: the client's answer is invalid") {
		t.Errorf("handler error = %v", o.err)
	}
	s.result("2")
}
