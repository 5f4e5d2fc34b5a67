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

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// noStateOnTheWire asserts that nothing the client received carries the
// sealed requestState: neither the member name nor a JWT-looking token.
func noStateOnTheWire(t *testing.T, c *wireClient) {
	t.Helper()
	wire := c.log.String()
	if wire == "" {
		t.Fatal("the wire log is empty")
	}
	for _, needle := range []string{"requestState", "eyJ", "inputResponses", "input_required"} {
		if i := strings.Index(wire, needle); i >= 0 {
			t.Errorf("the client received %q: …%s…", needle, wire[max(0, i-80):min(len(wire), i+80)])
		}
	}
}

// mrtrTools registers tools written in the MRTR style.
func mrtrTools(t *testing.T, srv *server.Server) {
	t.Helper()
	nameForm := form(t, "Your name?", elicit.String("name").Required())
	ageForm := form(t, "Your age?", elicit.Integer("age").Required())

	addTool(t, srv, "mrtr_one", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if req.Meta.ProtocolVersion != legacyVersion {
			return nil, fmt.Errorf("version %q", req.Meta.ProtocolVersion)
		}
		r, err := req.Elicit(ctx, nameForm, server.WithKey("name"))
		if err != nil {
			return nil, err
		}
		var v struct {
			Name string `json:"name"`
		}
		if r.Action == elicit.ActionAccept {
			if err := r.Decode(&v); err != nil {
				return nil, err
			}
		}
		return server.TextResult(fmt.Sprintf("hello %s (%s)", v.Name, r.Action)), nil
	})

	// Two questions, one per round; the first answer is carried in the
	// sealed state.
	addTool(t, srv, "mrtr_two", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var saved struct {
			Name string `json:"name"`
		}
		loaded, err := req.LoadState(&saved)
		if err != nil {
			return nil, err
		}
		if !loaded {
			r, err := req.Elicit(ctx, nameForm, server.WithKey("name"))
			if err != nil {
				return nil, err
			}
			if err := r.Decode(&saved); err != nil {
				return nil, err
			}
			if err := req.SaveState(saved); err != nil {
				return nil, err
			}
			_, err = req.Elicit(ctx, ageForm, server.WithKey("age"))
			if err == nil {
				return nil, errors.New("age answered in the round that asked it")
			}
			return nil, err
		}
		r, err := req.Elicit(ctx, ageForm, server.WithKey("age"))
		if err != nil {
			return nil, err
		}
		var a struct {
			Age int `json:"age"`
		}
		if err := r.Decode(&a); err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("%s is %d", saved.Name, a.Age)), nil
	})

	// Three questions in one round: an elicitation, a sampling request and
	// a roots listing.
	addTool(t, srv, "mrtr_three", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var parts []string
		pending := false
		if r, err := req.Elicit(ctx, nameForm, server.WithKey("name")); errors.Is(err, mrtr.ErrInputRequired) {
			pending = true
		} else if err != nil {
			return nil, err
		} else {
			parts = append(parts, "name:"+string(r.Content))
		}
		if r, err := req.CreateMessage(ctx, &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("Capital?")}, MaxTokens: 10}, server.WithKey("capital")); errors.Is(err, mrtr.ErrInputRequired) {
			pending = true
		} else if err != nil {
			return nil, err
		} else {
			parts = append(parts, "capital:"+r.Text())
		}
		if r, err := req.ListRoots(ctx, server.WithKey("roots")); errors.Is(err, mrtr.ErrInputRequired) {
			pending = true
		} else if err != nil {
			return nil, err
		} else {
			parts = append(parts, fmt.Sprintf("roots:%d", len(r.Roots)))
		}
		if pending {
			return nil, mrtr.ErrInputRequired
		}
		return server.TextResult(strings.Join(parts, " ")), nil
	})

	// Suspends every round: never done.
	addTool(t, srv, "mrtr_forever", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var n int
		if _, err := req.LoadState(&n); err != nil {
			return nil, err
		}
		if err := req.SaveState(n + 1); err != nil {
			return nil, err
		}
		return nil, req.Suspend()
	})

	// A URL elicitation through the bridge (the modern form has no
	// elicitationId; the bridge adds one for the legacy client).
	addTool(t, srv, "mrtr_url", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		u, err := elicit.NewURL("Open this", "https://example.com/consent")
		if err != nil {
			return nil, err
		}
		r, err := req.Elicit(ctx, u, server.WithKey("consent"))
		if err != nil {
			return nil, err
		}
		return server.TextResult("consent " + string(r.Action)), nil
	})
}

func TestBridgeOneRound(t *testing.T) {
	srv := newServer(t)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	for i, answer := range []map[string]any{
		{"action": "accept", "content": map[string]any{"name": "Ada"}},
		{"action": "decline"},
	} {
		s := c.request(i, "tools/call", toolCall("mrtr_one", nil))
		if s.ctype != "text/event-stream" {
			t.Fatalf("Content-Type = %q", s.ctype)
		}
		req := s.nextRequest("elicitation/create")
		p := params(t, req)
		if p["message"] != "Your name?" || p["mode"] != "form" || p["requestedSchema"] == nil {
			t.Errorf("bridged elicitation params = %s", req.Params)
		}
		if len(p) != 3 {
			t.Errorf("bridged elicitation carries extra members: %s", req.Params)
		}
		c.answer(req, answer)
		raw := s.result(fmt.Sprint(i))
		legacyShape(t, "tools/call", raw)
		want := "hello Ada (accept)"
		if i == 1 {
			want = "hello  (decline)"
		}
		if text, isErr := toolText(t, raw); text != want || isErr {
			t.Errorf("result = %q (isError %v), want %q", text, isErr, want)
		}
	}
	noStateOnTheWire(t, c)
}

func TestBridgeTwoRounds(t *testing.T) {
	srv := newServer(t)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	s := c.request("two", "tools/call", toolCall("mrtr_two", map[string]any{}))
	first := s.nextRequest("elicitation/create")
	if params(t, first)["message"] != "Your name?" {
		t.Fatalf("first question = %s", first.Params)
	}
	// The second question comes only after the first is answered.
	s.none("before the first answer")
	c.answer(first, map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}})
	second := s.nextRequest("elicitation/create")
	if params(t, second)["message"] != "Your age?" {
		t.Fatalf("second question = %s", second.Params)
	}
	if string(second.ID) == string(first.ID) {
		t.Errorf("both rounds used request id %s", first.ID)
	}
	c.answer(second, map[string]any{"action": "accept", "content": map[string]any{"age": 85}})
	if text, _ := toolText(t, s.result(`"two"`)); text != "Grace is 85" {
		t.Errorf("result = %q", text)
	}
	noStateOnTheWire(t, c)
}

func TestBridgeAsksConcurrently(t *testing.T) {
	srv := newServer(t)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	s := c.request(1, "tools/call", toolCall("mrtr_three", nil))
	// All three arrive before any is answered.
	got := map[string]message{}
	for range 3 {
		m := s.next()
		if !m.isRequest() {
			t.Fatalf("want a server request, got %s", m.raw)
		}
		got[m.Method] = m
	}
	for _, method := range []string{"elicitation/create", "sampling/createMessage", "roots/list"} {
		if _, ok := got[method]; !ok {
			t.Fatalf("requests seen: %v, missing %s", got, method)
		}
	}
	ids := map[string]bool{}
	for _, m := range got {
		ids[string(m.ID)] = true
	}
	if len(ids) != 3 {
		t.Errorf("the three requests share ids: %v", ids)
	}
	// Answer in an order other than asked.
	c.answer(got["roots/list"], map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}})
	s.none("after one of three answers")
	c.answer(got["sampling/createMessage"], map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"})
	c.answer(got["elicitation/create"], map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
	if text, _ := toolText(t, s.result("1")); text != `name:{"name":"Ada"} capital:Paris roots:1` {
		t.Errorf("result = %q", text)
	}
	noStateOnTheWire(t, c)
}

func TestBridgeClientErrorAndInvalidAnswer(t *testing.T) {
	srv := newServer(t)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	t.Run("client error on one of three", func(t *testing.T) {
		s := c.request(1, "tools/call", toolCall("mrtr_three", nil))
		var reqs []message
		for range 3 {
			reqs = append(reqs, s.next())
		}
		var failed message
		for _, r := range reqs {
			if r.Method == "sampling/createMessage" {
				failed = r
			}
		}
		c.answerError(failed, -32600, "sampling refused")
		// The other two are withdrawn, then the call fails.
		cancelled := map[string]bool{}
		var final message
		for {
			m := s.next()
			if m.isResponse() {
				final = m
				break
			}
			if m.Method != "notifications/cancelled" {
				t.Fatalf("unexpected %s", m.raw)
			}
			cancelled[string(mustJSON(t, params(t, m)["requestId"]))] = true
		}
		if len(cancelled) != 2 || cancelled[string(failed.ID)] {
			t.Errorf("cancelled %v, want the two unanswered requests", cancelled)
		}
		if final.Error == nil || final.Error.Code != -32603 || !strings.Contains(final.Error.Message, "sampling refused") {
			t.Errorf("final = %s", final.raw)
		}
	})

	t.Run("answer failing the schema", func(t *testing.T) {
		s := c.request(2, "tools/call", toolCall("mrtr_one", nil))
		c.answer(s.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"name": 7}})
		e := s.rpcErr("2")
		if e.Code != -32602 || !strings.Contains(e.Message, `"name"`) {
			t.Errorf("error = %d %q, want -32602 naming the input key", e.Code, e.Message)
		}
	})
	noStateOnTheWire(t, c)
}

func TestBridgeURLElicitationGetsID(t *testing.T) {
	srv := newServer(t)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)
	s := c.request(1, "tools/call", toolCall("mrtr_url", nil))
	req := s.nextRequest("elicitation/create")
	p := params(t, req)
	id, _ := p["elicitationId"].(string)
	if p["mode"] != "url" || p["url"] != "https://example.com/consent" || len(id) < 8 {
		t.Errorf("bridged url elicitation = %s, want mode url with an elicitationId", req.Params)
	}
	c.answer(req, map[string]any{"action": "accept"})
	if text, _ := toolText(t, s.result("1")); text != "consent accept" {
		t.Errorf("result = %q", text)
	}

	// Without the url capability the bridge never asks.
	formOnly := connect(t, f, `{"elicitation":{}}`)
	st := formOnly.request(2, "tools/call", toolCall("mrtr_url", nil))
	if e := st.rpcErr("2"); e.Code != -32021 {
		t.Errorf("code = %d, want -32021", e.Code)
	}
	if st.ctype != "application/json" {
		t.Errorf("something was streamed: %s", st.ctype)
	}
}

func TestBridgeMaxRounds(t *testing.T) {
	srv := newLegacyServer(t, &legacy.Options{MaxRounds: 2}, nil)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)
	s := c.request(1, "tools/call", toolCall("mrtr_forever", nil))
	var asked []string
	var final message
	for {
		m := s.next()
		if m.isResponse() {
			final = m
			break
		}
		if m.Method != "elicitation/create" {
			t.Fatalf("unexpected %s", m.raw)
		}
		asked = append(asked, params(t, m)["message"].(string))
		c.answer(m, map[string]any{"action": "accept", "content": map[string]any{"ok": true}})
	}
	if strings.Join(asked, ",") != "Question 0,Question 1" {
		t.Errorf("asked %v, want two rounds", asked)
	}
	if final.Error == nil || final.Error.Code != -32603 || !strings.Contains(final.Error.Message, "more than 2 times") {
		t.Errorf("final = %s, want -32603 naming the limit", final.raw)
	}
	noStateOnTheWire(t, c)
}

func TestBridgeRoundTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	srv := newLegacyServer(t, &legacy.Options{CallTimeout: timeout}, nil)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)
	start := time.Now()
	s := c.request(1, "tools/call", toolCall("mrtr_one", nil))
	req := s.nextRequest("elicitation/create")
	m := s.next()
	if m.Method != "notifications/cancelled" || string(mustJSON(t, params(t, m)["requestId"])) != string(req.ID) {
		t.Fatalf("want notifications/cancelled for %s, got %s", req.ID, m.raw)
	}
	e := s.rpcErr("1")
	if elapsed := time.Since(start); elapsed < timeout || elapsed > timeout+2*time.Second {
		t.Errorf("the call ended after %v, want about %v", elapsed, timeout)
	}
	if e.Code != -32603 || !strings.Contains(e.Message, "timed out") || !strings.Contains(e.Message, "elicitation/create") || !strings.Contains(e.Message, "50ms") {
		t.Errorf("error = %d %q, want -32603 saying elicitation/create timed out after 50ms", e.Code, e.Message)
	}
	noStateOnTheWire(t, c)
}

func TestBridgeCancelled(t *testing.T) {
	srv := newLegacyServer(t, &legacy.Options{CallTimeout: 5 * time.Second}, nil)
	mrtrTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)
	s := c.request("x", "tools/call", toolCall("mrtr_one", nil))
	req := s.nextRequest("elicitation/create")
	c.notify("notifications/cancelled", map[string]any{"requestId": "x"})
	for _, m := range s.end() {
		if m.isResponse() {
			t.Errorf("a response was written for the cancelled call: %s", m.raw)
		} else if m.Method != "notifications/cancelled" || string(mustJSON(t, params(t, m)["requestId"])) != string(req.ID) {
			t.Errorf("unexpected %s", m.raw)
		}
	}
}

// urlRequiredTool returns a URLElicitationRequiredError.
func urlRequiredTool(t *testing.T, srv *server.Server) {
	addTool(t, srv, "needs_login", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return nil, &server.URLElicitationRequiredError{
			Message: "Sign in to continue",
			Elicitations: []*elicit.Request{
				{Mode: elicit.ModeURL, Message: "Sign in to Example", URL: "https://example.com/login", ElicitationID: "login-1"},
			},
		}
	})
}

func TestURLElicitationRequired(t *testing.T) {
	srv := newServer(t)
	urlRequiredTool(t, srv)
	f := newFixture(t, srv)

	t.Run("legacy client gets -32042", func(t *testing.T) {
		c := connect(t, f, `{"elicitation":{"form":{},"url":{}}}`)
		s := c.request(1, "tools/call", toolCall("needs_login", nil))
		if s.status != http.StatusOK {
			t.Errorf("HTTP %d, want 200", s.status)
		}
		e := s.rpcErr("1")
		if e.Code != -32042 || e.Message != "Sign in to continue" {
			t.Errorf("error = %d %q, want -32042", e.Code, e.Message)
		}
		var data struct {
			Elicitations []map[string]any `json:"elicitations"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil || len(data.Elicitations) != 1 {
			t.Fatalf("data = %s", e.Data)
		}
		el := data.Elicitations[0]
		if el["elicitationId"] != "login-1" || el["mode"] != "url" || el["url"] != "https://example.com/login" || el["message"] != "Sign in to Example" {
			t.Errorf("data.elicitations[0] = %v", el)
		}
	})

	t.Run("legacy client without url capability", func(t *testing.T) {
		c := connect(t, f, `{"elicitation":{}}`)
		if e := c.request(1, "tools/call", toolCall("needs_login", nil)).rpcErr("1"); e.Code != -32021 {
			t.Errorf("code = %d, want -32021", e.Code)
		}
	})

	t.Run("modern client gets input_required", func(t *testing.T) {
		status, m := modernPost(t, f, 1, "tools/call", toolCall("needs_login", nil), `{"elicitation":{"form":{},"url":{}}}`)
		if status != http.StatusOK || m.Error != nil {
			t.Fatalf("HTTP %d %s", status, m.raw)
		}
		var res struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		if err := json.Unmarshal(m.Result, &res); err != nil {
			t.Fatal(err)
		}
		if res.ResultType != "input_required" || res.RequestState == "" || len(res.InputRequests) != 1 {
			t.Fatalf("result = %s", m.Result)
		}
		ir, ok := res.InputRequests["login-1"]
		if !ok {
			t.Fatalf("inputRequests not keyed by the elicitationId: %s", m.Result)
		}
		var r struct {
			Method string         `json:"method"`
			Params map[string]any `json:"params"`
		}
		if err := json.Unmarshal(ir, &r); err != nil {
			t.Fatal(err)
		}
		if r.Method != "elicitation/create" || r.Params["mode"] != "url" || r.Params["url"] != "https://example.com/login" || r.Params["message"] != "Sign in to Example" {
			t.Errorf("input request = %s", ir)
		}
		if _, ok := r.Params["elicitationId"]; ok || len(r.Params) != 3 {
			t.Errorf("modern url elicitation must be exactly mode, message, url: %s", ir)
		}
		if strings.Contains(string(m.raw), "-32042") {
			t.Errorf("modern response mentions -32042: %s", m.raw)
		}
	})

	t.Run("modern client without elicitation.url", func(t *testing.T) {
		for _, caps := range []string{`{}`, `{"elicitation":{}}`, `{"elicitation":{"form":{}}}`} {
			status, m := modernPost(t, f, 2, "tools/call", toolCall("needs_login", nil), caps)
			if status != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32021 {
				t.Errorf("caps %s: HTTP %d %s, want 400 -32021", caps, status, m.raw)
				continue
			}
			var data struct {
				RequiredCapabilities client.Capabilities `json:"requiredCapabilities"`
			}
			if err := json.Unmarshal(m.Error.Data, &data); err != nil || !data.RequiredCapabilities.CanElicitURL() {
				t.Errorf("caps %s: data = %s, want requiredCapabilities.elicitation.url", caps, m.Error.Data)
			}
		}
	})
}
