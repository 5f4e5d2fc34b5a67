package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// noStateOnTheWire asserts that nothing the client received carries the
// stateless protocol's machinery: neither the sealed requestState (the
// member name or a JWT-looking token) nor inputResponses nor
// input_required.
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

// askStats counts the runs of the tools askTools registers.
type askStats struct {
	runs map[string]*atomic.Int32 // tool name → runs; read-only once built
}

func (a *askStats) ran(name string) int32 { return a.runs[name].Load() }

// askTools registers tools that ask their client in plain sequence with
// the methods of server.Call, keys included. On a 2025-11-25 session every
// question is a real round trip on the call's stream: each handler runs
// once per call and never sees mrtr.ErrInputRequired. Each tool counts its
// runs and, when out is not nil, sends it what the handler returned (the
// test must then receive it).
func askTools(t *testing.T, srv *server.Server, out chan<- outcome) *askStats {
	t.Helper()
	nameForm := form(t, "Your name?", elicit.String("name").Required())
	ageForm := form(t, "Your age?", elicit.Integer("age").Required())
	st := &askStats{runs: make(map[string]*atomic.Int32)}
	tool := func(name string, h server.ToolHandler) {
		runs := &atomic.Int32{}
		st.runs[name] = runs
		addTool(t, srv, name, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			runs.Add(1)
			start := time.Now()
			res, err := h(ctx, req)
			if out != nil {
				out <- outcome{res: res, err: err, ctxErr: ctx.Err(), elapsed: time.Since(start)}
			}
			return res, err
		})
	}
	// The first round of a legacy call: version, round and state as a
	// handler sees them.
	fresh := func(req *server.ToolRequest) error {
		if req.Meta.ProtocolVersion != legacyVersion {
			return fmt.Errorf("version %q", req.Meta.ProtocolVersion)
		}
		if n := req.Round(); n != 1 {
			return fmt.Errorf("Round() = %d on a legacy session, want 1", n)
		}
		var v any
		if loaded, err := req.LoadState(&v); loaded || err != nil {
			return fmt.Errorf("LoadState on a first run = %v, %v", loaded, err)
		}
		return nil
	}
	timeout := func(req *server.ToolRequest) []server.AskOption {
		var args struct {
			TimeoutMs int `json:"timeoutMs"`
		}
		if json.Unmarshal(req.Arguments, &args) == nil && args.TimeoutMs > 0 {
			return []server.AskOption{server.WithTimeout(time.Duration(args.TimeoutMs) * time.Millisecond)}
		}
		return nil
	}

	// One question with a key of its own.
	tool("ask_one", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := fresh(req); err != nil {
			return nil, err
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

	// Two questions in sequence: the second is asked once the first is
	// answered, in the same run. Arguments {"timeoutMs": n} bound the
	// second one's wait.
	tool("ask_two", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := fresh(req); err != nil {
			return nil, err
		}
		r, err := req.Elicit(ctx, nameForm)
		if err != nil {
			return nil, err
		}
		var n struct {
			Name string `json:"name"`
		}
		if err := r.Decode(&n); err != nil {
			return nil, err
		}
		r, err = req.Elicit(ctx, ageForm, timeout(req)...)
		if err != nil {
			return nil, err
		}
		var a struct {
			Age int `json:"age"`
		}
		if err := r.Decode(&a); err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("%s is %d", n.Name, a.Age)), nil
	})

	// Three kinds at once, keyed: an elicitation, a sampling request and a
	// roots listing in one AskAll. Arguments {"timeoutMs": n} bound the
	// wait.
	tool("ask_three", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := fresh(req); err != nil {
			return nil, err
		}
		ans, err := req.AskAll(ctx, []mrtr.InputRequest{
			mrtr.ElicitRequest(nameForm).Keyed("name"),
			mrtr.SampleRequest(&mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("Capital?")}, MaxTokens: 10}).Keyed("capital"),
			mrtr.RootsRequest().Keyed("roots"),
		}, timeout(req)...)
		if err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("name:%s capital:%s roots:%d", ans[0].Elicit.Content, ans[1].Sample.Text(), len(ans[2].Roots.Roots))), nil
	})

	// A URL elicitation; arguments {"id": "..."} give its elicitationId.
	tool("ask_url", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var args struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		r, err := req.CreateURLElicitation(ctx, args.ID, "Open this", "https://example.com/consent", server.WithKey("consent"))
		if err != nil {
			return nil, err
		}
		return server.TextResult("consent " + string(r.Action)), nil
	})
	return st
}

func TestAskOneQuestion(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	st := askTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	for i, answer := range []map[string]any{
		{"action": "accept", "content": map[string]any{"name": "Ada"}},
		{"action": "decline"},
	} {
		s := c.request(i, "tools/call", toolCall("ask_one", nil))
		if s.ctype != "text/event-stream" {
			t.Fatalf("Content-Type = %q", s.ctype)
		}
		req := s.nextRequest("elicitation/create")
		p := params(t, req)
		if p["message"] != "Your name?" || p["mode"] != "form" || p["requestedSchema"] == nil {
			t.Errorf("elicitation params = %s", req.Params)
		}
		if len(p) != 3 {
			t.Errorf("the elicitation carries extra members (the key is not the client's business): %s", req.Params)
		}
		c.answer(req, answer)
		if o := recv(t, out, "the handler"); o.err != nil {
			t.Fatalf("handler error: %v", o.err)
		}
		raw := s.result(fmt.Sprint(i))
		legacyShape(t, "tools/call", raw)
		want := "hello Ada (accept)"
		if i == 1 {
			want = "hello  (decline)"
		}
		if text, isErr := toolText(t, raw); text != want || isErr {
			t.Errorf("result = %q (isError %v), want %q", text, isErr, want)
		}
		if rest := s.end(); len(rest) > 0 {
			t.Errorf("messages after the result: %s", rest[0].Raw)
		}
	}
	if n := st.ran("ask_one"); n != 2 {
		t.Errorf("ask_one ran %d times for two calls, want 2 (a question must not re-run the handler)", n)
	}
	noStateOnTheWire(t, c)
}

func TestAskTwoQuestionsInSequence(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	st := askTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	s := c.request("two", "tools/call", toolCall("ask_two", map[string]any{}))
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
		t.Errorf("both questions used request id %s", first.ID)
	}
	c.answer(second, map[string]any{"action": "accept", "content": map[string]any{"age": 85}})
	if o := recv(t, out, "the handler"); o.err != nil {
		t.Fatalf("handler error: %v", o.err)
	}
	if text, _ := toolText(t, s.result(`"two"`)); text != "Grace is 85" {
		t.Errorf("result = %q", text)
	}
	if n := st.ran("ask_two"); n != 1 {
		t.Errorf("ask_two ran %d times, want once: on a legacy session a question never ends the run", n)
	}
	noStateOnTheWire(t, c)
}

func TestAskAllThreeKindsKeyed(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	st := askTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	s := c.request(1, "tools/call", toolCall("ask_three", nil))
	// All three arrive before any is answered.
	got := map[string]message{}
	for range 3 {
		m := s.next()
		if !m.IsRequest() {
			t.Fatalf("want a server request, got %s", m.Raw)
		}
		if !serverRequestID.Match(m.ID) {
			t.Errorf("request id %s is not one of the server's own (\"<call>:<instance>.<n>\"; a question key leaked?)", m.ID)
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
	if p := params(t, got["sampling/createMessage"]); p["maxTokens"] != float64(10) || !strings.Contains(string(got["sampling/createMessage"].Params), "Capital?") {
		t.Errorf("sampling params = %s", got["sampling/createMessage"].Params)
	}
	// Answer in an order other than asked; the call waits for all three.
	c.answer(got["roots/list"], map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}})
	s.none("after one of three answers")
	c.answer(got["sampling/createMessage"], map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"})
	s.none("after two of three answers")
	c.answer(got["elicitation/create"], map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
	if o := recv(t, out, "the handler"); o.err != nil {
		t.Fatalf("handler error: %v", o.err)
	}
	if text, _ := toolText(t, s.result("1")); text != `name:{"name":"Ada"} capital:Paris roots:1` {
		t.Errorf("result = %q", text)
	}
	if n := st.ran("ask_three"); n != 1 {
		t.Errorf("ask_three ran %d times, want once", n)
	}
	noStateOnTheWire(t, c)
}

// threeRequests reads the three requests of ask_three, by method.
func threeRequests(t *testing.T, s *stream) map[string]message {
	t.Helper()
	got := map[string]message{}
	for range 3 {
		m := s.next()
		if !m.IsRequest() {
			t.Fatalf("want a server request, got %s", m.Raw)
		}
		got[m.Method] = m
	}
	if len(got) != 3 {
		t.Fatalf("want three methods, got %v", got)
	}
	return got
}

// cancelledUntilResponse reads the stream to the response to id and
// returns the server request ids (JSON text) withdrawn with
// notifications/cancelled before it, with their reasons.
func cancelledUntilResponse(t *testing.T, s *stream, id string) (map[string]string, message) {
	t.Helper()
	cancelled := map[string]string{}
	for {
		m := s.next()
		if m.IsResponse() {
			if string(m.ID) != id {
				t.Fatalf("want the response to %s, got %s", id, m.Raw)
			}
			return cancelled, m
		}
		if m.Method != "notifications/cancelled" || m.ID != nil {
			t.Fatalf("unexpected %s", m.Raw)
		}
		p := params(t, m)
		cancelled[string(mustJSON(t, p["requestId"]))] = fmt.Sprint(p["reason"])
	}
}

func TestAskClientErrorAndInvalidAnswer(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	askTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	t.Run("client error on one of three", func(t *testing.T) {
		s := c.request(1, "tools/call", toolCall("ask_three", nil))
		reqs := threeRequests(t, s)
		failed := reqs["sampling/createMessage"]
		c.answerError(failed, -32600, "sampling refused")
		o := recv(t, out, "the handler")
		var ce *server.ClientError
		if !errors.As(o.err, &ce) || ce.Method != "sampling/createMessage" || ce.Err.Code != -32600 || ce.Err.Message != "sampling refused" {
			t.Fatalf("handler error = %T %v, want the client's sampling error", o.err, o.err)
		}
		// The other two are withdrawn, then the call ends with the
		// handler's error as an isError result.
		cancelled, final := cancelledUntilResponse(t, s, "1")
		want := map[string]bool{string(reqs["elicitation/create"].ID): true, string(reqs["roots/list"].ID): true}
		if len(cancelled) != 2 {
			t.Errorf("cancelled %v, want the two unanswered requests %v", cancelled, want)
		}
		for id := range cancelled {
			if !want[id] {
				t.Errorf("request %s was cancelled; it had been answered", id)
			}
		}
		if final.Error != nil {
			t.Fatalf("final = %s, want a tool result", final.Raw)
		}
		if text, isErr := toolText(t, final.Result); !isErr || !strings.Contains(text, "sampling refused") {
			t.Errorf("result = %q (isError %v), want isError naming the client's error", text, isErr)
		}
	})

	t.Run("answer failing the schema", func(t *testing.T) {
		s := c.request(2, "tools/call", toolCall("ask_one", nil))
		c.answer(s.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"name": 7}})
		o := recv(t, out, "the handler")
		if o.err == nil || !strings.Contains(o.err.Error(), "elicitation/create: the client's answer is invalid") {
			t.Errorf("handler error = %v, want the invalid answer", o.err)
		}
		if text, isErr := toolText(t, s.result("2")); !isErr || !strings.Contains(text, "invalid") {
			t.Errorf("result = %q (isError %v), want isError", text, isErr)
		}
	})

	t.Run("one invalid answer of three", func(t *testing.T) {
		s := c.request(3, "tools/call", toolCall("ask_three", nil))
		reqs := threeRequests(t, s)
		c.answer(reqs["elicitation/create"], map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		c.answer(reqs["sampling/createMessage"], map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"})
		c.answer(reqs["roots/list"], map[string]any{"roots": []any{map[string]any{"uri": "https://not-a-file"}}})
		o := recv(t, out, "the handler")
		if o.err == nil || !strings.Contains(o.err.Error(), "roots/list: the client's answer is invalid") || !strings.Contains(o.err.Error(), "file://") {
			t.Errorf("handler error = %v, want roots/list's invalid answer", o.err)
		}
		if _, isErr := toolText(t, s.result("3")); !isErr {
			t.Error("result is not isError")
		}
	})
	noStateOnTheWire(t, c)
}

func TestAskURLElicitationNeedsItsID(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	askTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	t.Run("with an id", func(t *testing.T) {
		s := c.request(1, "tools/call", toolCall("ask_url", map[string]any{"id": "consent-1"}))
		req := s.nextRequest("elicitation/create")
		p := params(t, req)
		if p["mode"] != "url" || p["url"] != "https://example.com/consent" || p["message"] != "Open this" || p["elicitationId"] != "consent-1" || len(p) != 4 {
			t.Errorf("url elicitation = %s, want exactly mode, message, url and the handler's elicitationId", req.Params)
		}
		c.answer(req, map[string]any{"action": "accept"})
		if o := recv(t, out, "the handler"); o.err != nil {
			t.Fatalf("handler error: %v", o.err)
		}
		if text, _ := toolText(t, s.result("1")); text != "consent accept" {
			t.Errorf("result = %q", text)
		}
	})

	t.Run("without an id", func(t *testing.T) {
		s := c.request(2, "tools/call", toolCall("ask_url", map[string]any{}))
		o := recv(t, out, "the handler")
		if o.err == nil || !strings.Contains(o.err.Error(), "needs an elicitationId") {
			t.Errorf("handler error = %v, want one saying a 2025-11-25 URL elicitation needs an elicitationId", o.err)
		}
		if s.ctype != "application/json" {
			t.Errorf("Content-Type = %q: something was sent to the client", s.ctype)
		}
		if text, isErr := toolText(t, s.result("2")); !isErr || !strings.Contains(text, "elicitationId") {
			t.Errorf("result = %q (isError %v)", text, isErr)
		}
	})

	t.Run("without the url capability", func(t *testing.T) {
		formOnly := connect(t, f, `{"elicitation":{}}`)
		s := formOnly.request(3, "tools/call", toolCall("ask_url", map[string]any{"id": "consent-2"}))
		var mc *mcp.MissingCapabilityError
		if o := recv(t, out, "the handler"); !errors.As(o.err, &mc) {
			t.Errorf("handler error = %v, want *mcp.MissingCapabilityError", o.err)
		}
		if e := s.rpcErr("3"); e.Code != -32021 {
			t.Errorf("code = %d, want -32021", e.Code)
		}
		if s.ctype != "application/json" {
			t.Errorf("something was streamed: %s", s.ctype)
		}
	})
	noStateOnTheWire(t, c)
}

// TestAskTimeout checks a wait bounded by WithTimeout or by the legacy
// handler's CallTimeout: the questions still open are withdrawn, the
// handler gets ErrTimeout naming them, and the call ends with its error.
func TestAskTimeout(t *testing.T) {
	const timeout = 50 * time.Millisecond
	for _, tc := range []struct {
		name string
		opts *legacy.Options
		args map[string]any
	}{
		{"WithTimeout on AskAll", &legacy.Options{CallTimeout: 10 * time.Second, KeepAlive: 10 * time.Millisecond}, map[string]any{"timeoutMs": 50}},
		{"CallTimeout", &legacy.Options{CallTimeout: timeout, KeepAlive: 10 * time.Millisecond}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newLegacyServer(t, tc.opts, nil)
			out := make(chan outcome, 1)
			askTools(t, srv, out)
			f := newFixture(t, srv)
			c := connect(t, f, allCaps)

			s := c.request(1, "tools/call", toolCall("ask_three", tc.args))
			reqs := threeRequests(t, s)
			o := recv(t, out, "the handler")
			if !errors.Is(o.err, server.ErrTimeout) {
				t.Fatalf("handler error = %v, want ErrTimeout", o.err)
			}
			if msg := o.err.Error(); !strings.Contains(msg, "elicitation/create, roots/list, sampling/createMessage") || !strings.Contains(msg, "50ms") {
				t.Errorf("handler error %q, want it to name the three methods and 50ms", msg)
			}
			if o.elapsed < timeout || o.elapsed > timeout+2*time.Second {
				t.Errorf("the wait took %v, want about %v", o.elapsed, timeout)
			}
			cancelled, final := cancelledUntilResponse(t, s, "1")
			if len(cancelled) != 3 {
				t.Errorf("cancelled %v, want the three requests", cancelled)
			}
			for _, m := range reqs {
				if reason, ok := cancelled[string(m.ID)]; !ok || !strings.Contains(reason, "timed out") {
					t.Errorf("%s (id %s): cancelled %v with %q, want it withdrawn for timing out", m.Method, m.ID, ok, reason)
				}
			}
			if final.Error != nil {
				t.Fatalf("final = %s, want a tool result", final.Raw)
			}
			if text, isErr := toolText(t, final.Result); !isErr || !strings.Contains(text, "timed out") {
				t.Errorf("result = %q (isError %v)", text, isErr)
			}
			if s.comments() == 0 {
				t.Error("no keep-alive comment while waiting (KeepAlive 10ms)")
			}
			// Late answers are refused and go nowhere.
			c.lateAnswer(reqs["roots/list"], map[string]any{"roots": []any{}})
			noStateOnTheWire(t, c)
		})
	}

	// Only what is still open is withdrawn: the first question was
	// answered (its answer was read, since the second followed it).
	t.Run("WithTimeout on the second question", func(t *testing.T) {
		srv := newLegacyServer(t, &legacy.Options{CallTimeout: 10 * time.Second}, nil)
		out := make(chan outcome, 1)
		askTools(t, srv, out)
		f := newFixture(t, srv)
		c := connect(t, f, allCaps)
		s := c.request(1, "tools/call", toolCall("ask_two", map[string]any{"timeoutMs": 50}))
		// The first question has no timeout of its own: it waits past 50ms.
		first := s.nextRequest("elicitation/create")
		s.none("while the first question waits")
		s.none("while the first question waits longer than the second's timeout")
		c.answer(first, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		second := s.nextRequest("elicitation/create")
		o := recv(t, out, "the handler")
		if !errors.Is(o.err, server.ErrTimeout) || !strings.Contains(o.err.Error(), "50ms") {
			t.Fatalf("handler error = %v, want ErrTimeout after 50ms", o.err)
		}
		cancelled, _ := cancelledUntilResponse(t, s, "1")
		if _, ok := cancelled[string(second.ID)]; len(cancelled) != 1 || !ok {
			t.Errorf("cancelled %v, want only the second question %s", cancelled, second.ID)
		}
	})
}

// TestAskCancelled checks that the client's notifications/cancelled for
// the call ends its wait at once: the questions still open are withdrawn,
// the handler's context ends, and no response is written.
func TestAskCancelled(t *testing.T) {
	const callTimeout = 5 * time.Second
	srv := newLegacyServer(t, &legacy.Options{CallTimeout: callTimeout}, nil)
	out := make(chan outcome, 1)
	askTools(t, srv, out)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	// cancel cancels the client's call id, whose stream is s, and checks
	// the handler and the stream; open are the server requests of the
	// call still waiting for an answer.
	cancel := func(t *testing.T, s *stream, id any, open []message) {
		t.Helper()
		sent := time.Now()
		c.notify("notifications/cancelled", map[string]any{"requestId": id, "reason": "user aborted"})
		o := recv(t, out, "the handler")
		if since := time.Since(sent); since > callTimeout/5 {
			t.Errorf("the wait ended %v after the cancel; want at once", since)
		}
		if o.err == nil || errors.Is(o.err, server.ErrTimeout) || !strings.Contains(o.err.Error(), "user aborted") {
			t.Errorf("handler error = %v, want the cancellation with its reason", o.err)
		}
		if o.ctxErr != context.Canceled {
			t.Errorf("ctx.Err() = %v, want context.Canceled", o.ctxErr)
		}
		want := map[string]bool{}
		for _, m := range open {
			want[string(m.ID)] = true
		}
		withdrawn := map[string]bool{}
		for _, m := range s.end() {
			if m.IsResponse() {
				t.Errorf("a response was written for the cancelled call: %s", m.Raw)
				continue
			}
			id := string(mustJSON(t, params(t, m)["requestId"]))
			if m.Method != "notifications/cancelled" || !want[id] || withdrawn[id] {
				t.Errorf("unexpected %s", m.Raw)
			}
			withdrawn[id] = true
		}
		if len(withdrawn) != len(want) {
			t.Errorf("withdrawn %v, want %v", withdrawn, want)
		}
		if got := c.call("after", "ping", nil); string(got) != "{}" {
			t.Errorf("ping after the cancel = %s", got)
		}
	}

	t.Run("during AskAll", func(t *testing.T) {
		s := c.request("x", "tools/call", toolCall("ask_three", nil))
		reqs := threeRequests(t, s)
		cancel(t, s, "x", []message{reqs["elicitation/create"], reqs["sampling/createMessage"], reqs["roots/list"]})
	})
	t.Run("after an answered question", func(t *testing.T) {
		s := c.request("y", "tools/call", toolCall("ask_two", nil))
		c.answer(s.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		second := s.nextRequest("elicitation/create")
		cancel(t, s, "y", []message{second})
	})
	noStateOnTheWire(t, c)
}

// TestAskKeysCheckedOnLegacy checks that the rules for question keys hold
// on a legacy session too, where keys never reach the wire: a handler's
// code behaves the same on both protocols.
func TestAskKeysCheckedOnLegacy(t *testing.T) {
	srv := newServer(t)
	nameForm := form(t, "Your name?", elicit.String("name").Required())
	out := make(chan error, 1)
	addTool(t, srv, "reserved", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		_, err := req.Elicit(ctx, nameForm, server.WithKey("baton:0"))
		out <- err
		return nil, err
	})
	addTool(t, srv, "twice", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		_, err := req.AskAll(ctx, []mrtr.InputRequest{mrtr.ElicitRequest(nameForm).Keyed("k"), mrtr.RootsRequest().Keyed("k")})
		out <- err
		return nil, err
	})
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)
	for i, tc := range []struct{ tool, want string }{
		{"reserved", `keys beginning "baton:" are the server's own`},
		{"twice", "is used twice"},
	} {
		s := c.request(i, "tools/call", toolCall(tc.tool, nil))
		if err := recv(t, out, "the handler"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: handler error = %v, want %q", tc.tool, err, tc.want)
		}
		if s.ctype != "application/json" {
			t.Errorf("%s: Content-Type = %q: something was asked", tc.tool, s.ctype)
		}
		if _, isErr := toolText(t, s.result(fmt.Sprint(i))); !isErr {
			t.Errorf("%s: result not isError", tc.tool)
		}
	}
}

// countingLedger is a server.Ledger that counts the entries asked of it.
type countingLedger struct {
	mu   sync.Mutex
	ids  []string
	real server.Ledger
}

func (l *countingLedger) Redeem(ctx context.Context, id string, expires time.Time) error {
	l.mu.Lock()
	l.ids = append(l.ids, id)
	l.mu.Unlock()
	return l.real.Redeem(ctx, id, expires)
}

func (l *countingLedger) entries() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.ids)
}

// TestRedeemOnLegacySession checks that Redeem on a 2025-11-25 session
// succeeds without a ledger entry: the answers come from a live exchange
// and there is no retry to replay, in a first run and in a run the bridge
// resumed from a Suspend alike. The same tool on 2026-07-28 does write the
// entry, and a replayed retry fails, so the ledger is really consulted.
func TestRedeemOnLegacySession(t *testing.T) {
	srv := newServer(t)
	ledger := &countingLedger{real: server.NewMemoryLedger(nil)}
	confirm := form(t, "Transfer?", elicit.Boolean("ok").Required())
	redeemed := make(chan error, 4)
	var transfers atomic.Int32
	addTool(t, srv, "transfer", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var args struct {
			SuspendFirst bool `json:"suspendFirst"`
		}
		if err := json.Unmarshal(req.Arguments, &args); err != nil {
			return nil, err
		}
		r, err := req.Elicit(ctx, confirm, server.WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		if r.Action != elicit.ActionAccept {
			return server.TextResult("not confirmed"), nil
		}
		if args.SuspendFirst && req.Round() == 1 {
			return nil, req.Suspend()
		}
		err = req.Redeem(ctx, ledger)
		redeemed <- err
		if err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("transfer %d in round %d", transfers.Add(1), req.Round())), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)

	for i, tc := range []struct {
		args map[string]any
		want string
	}{
		{nil, "transfer 1 in round 1"},
		{nil, "transfer 2 in round 1"},
		{map[string]any{"suspendFirst": true}, "transfer 3 in round 2"},
	} {
		s := c.request(i, "tools/call", toolCall("transfer", tc.args))
		c.answer(s.nextRequest("elicitation/create"), map[string]any{"action": "accept", "content": map[string]any{"ok": true}})
		if err := recv(t, redeemed, "Redeem"); err != nil {
			t.Errorf("call %d: Redeem on a legacy session = %v, want nil", i, err)
		}
		if text, isErr := toolText(t, s.result(fmt.Sprint(i))); text != tc.want || isErr {
			t.Errorf("call %d: result = %q (isError %v), want %q", i, text, isErr, tc.want)
		}
	}
	if n := ledger.entries(); n != 0 {
		t.Errorf("the ledger got %d entries from legacy calls, want none", n)
	}
	noStateOnTheWire(t, c)

	// The same tool on the stateless protocol: the retry redeems its state.
	caps := `{"elicitation":{}}`
	status, m := modernPost(t, f, 1, "tools/call", toolCall("transfer", nil), caps)
	var ir struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(m.Result, &ir); status != http.StatusOK || err != nil || ir.ResultType != "input_required" || ir.RequestState == "" {
		t.Fatalf("modern first round: HTTP %d %s", status, m.Raw)
	}
	retry := func(id int) message {
		p := toolCall("transfer", nil)
		p["requestState"] = ir.RequestState
		p["inputResponses"] = map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}
		_, m := modernPost(t, f, id, "tools/call", p, caps)
		return m
	}
	if m := retry(2); m.Error != nil || !strings.Contains(string(m.Result), "transfer 4 in round 2") {
		t.Errorf("modern retry = %s", m.Raw)
	}
	if err := recv(t, redeemed, "Redeem"); err != nil {
		t.Errorf("modern Redeem = %v", err)
	}
	if n := ledger.entries(); n != 1 {
		t.Errorf("the ledger has %d entries after the modern retry, want 1", n)
	}
	retry(3)
	if err := recv(t, redeemed, "Redeem"); !errors.Is(err, server.ErrAlreadyRedeemed) {
		t.Errorf("replayed modern retry: Redeem = %v, want ErrAlreadyRedeemed", err)
	}
	if n := transfers.Load(); n != 4 {
		t.Errorf("%d transfers, want 4 (the replay must not transfer)", n)
	}
}

// serverRequestID is the form of the id of a question of a call over HTTP:
// the call's record key, the asking instance and a number (waiting.go).
var serverRequestID = regexp.MustCompile(`^"[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{16}\.[0-9]+"$`)
