package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// The bridge: on a 2025-11-25 session a question is a real round trip and
// never ends a run, so the bridge (running a handler again after an
// input_required) is reached only by a handler that returns Suspend: an
// input_required with only a state. The bridge re-runs it at once with
// that state, up to MaxRounds times; the state never reaches the client.

// runLog records what each run of a suspending handler saw.
type runLog struct {
	mu     sync.Mutex
	rounds []int  // req.Round() of each run
	loaded []bool // whether LoadState found a state
	values []int  // the value loaded (0 when none)
}

func (l *runLog) add(round int, loaded bool, v int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rounds = append(l.rounds, round)
	l.loaded = append(l.loaded, loaded)
	l.values = append(l.values, v)
}

func (l *runLog) get() (rounds []int, loaded []bool, values []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.rounds), slices.Clone(l.loaded), slices.Clone(l.values)
}

// suspendTools registers tools that suspend, and returns their run logs
// by tool name:
//
//   - suspend_once saves {"n": 41} and suspends in its first run; the
//     re-run loads it and completes with n+1;
//   - suspend_forever loads n, saves n+1 and suspends, every run;
//   - bare_input_required returns mrtr.ErrInputRequired without asking
//     anything or suspending.
func suspendTools(t *testing.T, srv *server.Server) map[string]*runLog {
	t.Helper()
	logs := map[string]*runLog{"suspend_once": {}, "suspend_forever": {}, "bare_input_required": {}}
	addTool(t, srv, "suspend_once", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var st struct {
			N int `json:"n"`
		}
		loaded, err := req.LoadState(&st)
		if err != nil {
			return nil, err
		}
		logs["suspend_once"].add(req.Round(), loaded, st.N)
		if !loaded {
			if err := req.SaveState(map[string]int{"n": 41}); err != nil {
				return nil, err
			}
			return nil, req.Suspend()
		}
		return server.TextResult(fmt.Sprintf("n=%d round=%d principal=%q", st.N+1, req.Round(), req.Principal())), nil
	})
	addTool(t, srv, "suspend_forever", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var n int
		loaded, err := req.LoadState(&n)
		if err != nil {
			return nil, err
		}
		logs["suspend_forever"].add(req.Round(), loaded, n)
		if err := req.SaveState(n + 1); err != nil {
			return nil, err
		}
		return nil, req.Suspend()
	})
	addTool(t, srv, "bare_input_required", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		logs["bare_input_required"].add(req.Round(), false, 0)
		return nil, fmt.Errorf("nothing to ask, really: %w", mrtr.ErrInputRequired)
	})
	return logs
}

// onlyResponse reads the stream of call id, checking that the response is
// all it carries: the bridge never asks the client anything for a
// Suspend.
func onlyResponse(t *testing.T, s *stream, id string) message {
	t.Helper()
	m := s.next()
	if !m.IsResponse() || string(m.ID) != id {
		t.Fatalf("want only the response to %s, got %s", id, m.Raw)
	}
	if rest := s.end(); len(rest) > 0 {
		t.Errorf("messages after the response: %s", rest[0].Raw)
	}
	return m
}

func TestBridgeSuspendOnceThenComplete(t *testing.T) {
	srv := newServer(t)
	logs := suspendTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)

	m := onlyResponse(t, c.request(1, "tools/call", toolCall("suspend_once", nil)), "1")
	if m.Error != nil {
		t.Fatalf("response = %s", m.Raw)
	}
	legacyShape(t, "tools/call", m.Result)
	if text, isErr := toolText(t, m.Result); text != `n=42 round=2 principal=""` || isErr {
		t.Errorf("result = %q (isError %v), want the state of run 1 loaded in round 2", text, isErr)
	}
	rounds, loaded, values := logs["suspend_once"].get()
	if !slices.Equal(rounds, []int{1, 2}) || !slices.Equal(loaded, []bool{false, true}) || !slices.Equal(values, []int{0, 41}) {
		t.Errorf("runs: rounds %v, loaded %v, values %v; want two runs, the second resuming the first's state", rounds, loaded, values)
	}
	noStateOnTheWire(t, c)
}

// TestBridgeSuspendsPromptsAndResources checks the bridge for the other
// two methods whose handlers can suspend.
func TestBridgeSuspendsPromptsAndResources(t *testing.T) {
	srv := newServer(t)
	var promptRuns, resourceRuns atomic.Int32
	err := srv.AddPrompt(server.Prompt{Name: "p_once"}, func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
		promptRuns.Add(1)
		var word string
		if loaded, err := req.LoadState(&word); err != nil || !loaded {
			if err := req.SaveState("resumed"); err != nil {
				return nil, err
			}
			return nil, req.Suspend()
		}
		return &server.PromptResult{Messages: []server.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text(fmt.Sprintf("%s in round %d", word, req.Round()))}}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = srv.AddResource(server.Resource{URI: "test://once", Name: "once"}, func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
		resourceRuns.Add(1)
		var word string
		if loaded, err := req.LoadState(&word); err != nil || !loaded {
			if err := req.SaveState("resumed"); err != nil {
				return nil, err
			}
			return nil, req.Suspend()
		}
		return &server.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(req.URI, "text/plain", fmt.Sprintf("%s in round %d", word, req.Round()))}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)

	m := onlyResponse(t, c.request(1, "prompts/get", map[string]any{"name": "p_once"}), "1")
	if m.Error != nil || !strings.Contains(string(m.Result), "resumed in round 2") {
		t.Errorf("prompts/get = %s", m.Raw)
	}
	legacyShape(t, "prompts/get", m.Result)
	m = onlyResponse(t, c.request(2, "resources/read", map[string]any{"uri": "test://once"}), "2")
	if m.Error != nil || !strings.Contains(string(m.Result), "resumed in round 2") {
		t.Errorf("resources/read = %s", m.Raw)
	}
	legacyShape(t, "resources/read", m.Result)
	if p, r := promptRuns.Load(), resourceRuns.Load(); p != 2 || r != 2 {
		t.Errorf("prompt ran %d times, resource %d; want 2 each", p, r)
	}
	noStateOnTheWire(t, c)
}

func TestBridgeMaxRounds(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxRounds int // 0: the default
		want      int
	}{
		{"MaxRounds 2", 2, 2},
		{"default", 0, 16}, // Options.MaxRounds' documented default
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newLegacyServer(t, &legacy.Options{MaxRounds: tc.maxRounds}, nil)
			logs := suspendTools(t, srv)
			f := newFixture(t, srv)
			c := connect(t, f, allCaps)
			final := onlyResponse(t, c.request(1, "tools/call", toolCall("suspend_forever", nil)), "1")
			if final.Error == nil || final.Error.Code != -32603 || !strings.Contains(final.Error.Message, fmt.Sprintf("more than %d times", tc.want)) {
				t.Errorf("final = %s, want -32603 naming the limit %d", final.Raw, tc.want)
			}
			// The first run and tc.want re-runs, each resuming the state of
			// the one before.
			rounds, loaded, values := logs["suspend_forever"].get()
			if len(rounds) != tc.want+1 {
				t.Fatalf("the handler ran %d times, want %d", len(rounds), tc.want+1)
			}
			for i := range rounds {
				if rounds[i] != i+1 || loaded[i] != (i > 0) || values[i] != i {
					t.Errorf("run %d: round %d, loaded %v, value %d; want round %d, value %d", i, rounds[i], loaded[i], values[i], i+1, i)
				}
			}
			noStateOnTheWire(t, c)
		})
	}
}

// TestBridgeBareInputRequired checks that a handler returning
// ErrInputRequired without asking or suspending fails at once, without a
// re-run: there is nothing the bridge could wait for.
func TestBridgeBareInputRequired(t *testing.T) {
	srv := newServer(t)
	logs := suspendTools(t, srv)
	f := newFixture(t, srv)
	c := connect(t, f, allCaps)
	final := onlyResponse(t, c.request(1, "tools/call", toolCall("bare_input_required", nil)), "1")
	if final.Error == nil || final.Error.Code != -32603 || !strings.Contains(final.Error.Message, "without asking for input") {
		t.Errorf("final = %s, want -32603 saying nothing was asked", final.Raw)
	}
	if rounds, _, _ := logs["bare_input_required"].get(); !slices.Equal(rounds, []int{1}) {
		t.Errorf("runs in rounds %v, want one", rounds)
	}
	noStateOnTheWire(t, c)
}

// TestBridgeReplaysLiveAnswers checks what a re-run's questions do: a
// question asked live in an earlier run, at the same position among the
// run's questions and the same question, gets the client's answer again
// without reaching the client; a changed one, and one first reached in
// the re-run, are asked.
func TestBridgeReplaysLiveAnswers(t *testing.T) {
	srv := newServer(t)
	nameSchema := nameSchema(t)
	ageForm := form(t, "Your age?", elicit.Integer("age").Required())
	citySchema, err := elicit.NewSchema(elicit.String("city").Required())
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	addTool(t, srv, "mixed", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		runs.Add(1)
		name, err := req.CreateFormElicitation(ctx, "Your name?", nameSchema)
		if err != nil {
			return nil, err
		}
		var n struct {
			Name string `json:"name"`
		}
		if err := name.Decode(&n); err != nil {
			return nil, err
		}
		// Changes between runs: asked again.
		city, err := req.CreateFormElicitation(ctx, fmt.Sprintf("Your city? (round %d)", req.Round()), citySchema)
		if err != nil {
			return nil, err
		}
		var ci struct {
			City string `json:"city"`
		}
		if err := city.Decode(&ci); err != nil {
			return nil, err
		}
		if req.Round() == 1 {
			return nil, req.Suspend()
		}
		// First reached in the re-run: asked.
		age, err := req.Elicit(ctx, ageForm, server.WithKey("age"))
		if err != nil {
			return nil, err
		}
		var a struct {
			Age int `json:"age"`
		}
		if err := age.Decode(&a); err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("%s, %s, %d", n.Name, ci.City, a.Age)), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)

	var asked []string
	got := drive(t, c, c.request(1, "tools/call", toolCall("mixed", nil)), "1", func(m message) any {
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(m.Params, &p)
		asked = append(asked, p.Message)
		// A different answer each time: a repeated question would show in
		// the result.
		switch {
		case p.Message == "Your name?":
			return map[string]any{"action": "accept", "content": map[string]any{"name": fmt.Sprint("Ada", len(asked))}}
		case p.Message == "Your age?":
			return map[string]any{"action": "accept", "content": map[string]any{"age": 36}}
		}
		return map[string]any{"action": "accept", "content": map[string]any{"city": fmt.Sprint("London", len(asked))}}
	})
	if want := []string{"Your name?", "Your city? (round 1)", "Your city? (round 2)", "Your age?"}; !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if text, _ := toolText(t, got.result); text != "Ada1, London3, 36" {
		t.Errorf("result = %q, want %q", text, "Ada1, London3, 36")
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("the handler ran %d times, want 2", n)
	}
	noStateOnTheWire(t, c)
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
			t.Fatalf("HTTP %d %s", status, m.Raw)
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
		if strings.Contains(string(m.Raw), "-32042") {
			t.Errorf("modern response mentions -32042: %s", m.Raw)
		}
	})

	t.Run("modern client without elicitation.url", func(t *testing.T) {
		for _, caps := range []string{`{}`, `{"elicitation":{}}`, `{"elicitation":{"form":{}}}`} {
			status, m := modernPost(t, f, 2, "tools/call", toolCall("needs_login", nil), caps)
			if status != http.StatusBadRequest || m.Error == nil || m.Error.Code != -32021 {
				t.Errorf("caps %s: HTTP %d %s, want 400 -32021", caps, status, m.Raw)
				continue
			}
			var data struct {
				RequiredCapabilities mcp.ClientCapabilities `json:"requiredCapabilities"`
			}
			if err := json.Unmarshal(m.Error.Data, &data); err != nil || !data.RequiredCapabilities.CanElicitURL() {
				t.Errorf("caps %s: data = %s, want requiredCapabilities.elicitation.url", caps, m.Error.Data)
			}
		}
	})
}
