package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// TestServers checks that every server answers both scenarios as the load
// generator expects, and that Baton and the go-sdk server really verify
// the state and validate the answer (the floor does neither, by design).
func TestServers(t *testing.T) {
	urls, _, err := startServers()
	if err != nil {
		t.Fatal(err)
	}
	tr := newTransport(1)
	for _, name := range serverNames {
		t.Run(name, func(t *testing.T) {
			c := newClient(tr, urls[name])
			if err := c.echoOp(); err != nil {
				t.Fatalf("echo: %v", err)
			}
			if err := c.confirmOp(); err != nil {
				t.Fatalf("confirm: %v", err)
			}
			if name == "floor" {
				return
			}
			// The checks below send their requests through mcptest, which
			// builds the envelope and headers and checks each response;
			// the load generator's own requests are the two operations
			// above.
			mc, err := mcptest.New(mcptest.URL(urls[name], nil), &mcptest.Options{
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{Form: &mcp.Empty{}}},
				ClientInfo:   mcp.Implementation{Name: "baton-bench", Version: "1.0.0"},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			call := func(tool string, args any, opts ...mcptest.CallOption) *mcptest.Response {
				t.Helper()
				r, err := mc.Do(ctx, "tools/call", map[string]any{"name": tool, "arguments": args}, opts...)
				if err != nil {
					t.Fatalf("%s: %v", tool, err)
				}
				return r
			}
			// Arguments are validated against the echo tool's input schema.
			for _, args := range []string{`{"text":5}`, `{}`, `{"text":"hello","extra":1}`} {
				r := call("echo", json.RawMessage(args))
				var res struct {
					IsError bool `json:"isError"`
				}
				if r.Error == nil && (json.Unmarshal(r.Result, &res) != nil || !res.IsError) {
					t.Errorf("echo with arguments %s accepted: %s", args, r.Body)
				}
			}
			r1 := call("confirm", map[string]any{"id": 42})
			var round1 struct {
				RequestState string `json:"requestState"`
			}
			if err := json.Unmarshal(r1.Result, &round1); err != nil || r1.ResultType() != "input_required" || round1.RequestState == "" {
				t.Fatalf("round 1: %s (%v)", r1.Body, err)
			}
			state := round1.RequestState
			// retry sends round 2 of confirm with arguments {"id":id},
			// presenting state and answers (inputResponses).
			retry := func(id int, state string, answers any) *mcptest.Response {
				t.Helper()
				return call("confirm", map[string]any{"id": id}, mcptest.Resume(state, answers))
			}
			answer := func(content string) map[string]any {
				return map[string]any{"confirm": json.RawMessage(`{"action":"accept","content":` + content + `}`)}
			}
			good := answer(`{"confirm":true}`)
			if r := retry(42, state, good); !strings.Contains(string(r.Result), `"text":"confirmed"`) {
				t.Fatalf("good retry: %s", r.Body)
			}
			tampered := state[:len(state)-2] + flip(state[len(state)-2]) + state[len(state)-1:]
			for what, r := range map[string]*mcptest.Response{
				"tampered state": retry(42, tampered, good),
				"other args":     retry(43, state, good),
				"forged state":   retry(42, "eyJhbGciOiJub25lIn0.e30.", good),
				"wrong type":     retry(42, state, answer(`{"confirm":"yes"}`)),
				"missing field":  retry(42, state, answer(`{}`)),
			} {
				if r.Error == nil || strings.Contains(string(r.Body), `"text":"confirmed"`) {
					t.Errorf("%s not refused with a JSON-RPC error: %s", what, r.Body)
				} else {
					t.Logf("%s refused: %.200s", what, r.Body)
				}
			}
			// A retry without the answer is asked again, with a fresh state.
			var again struct {
				RequestState string `json:"requestState"`
			}
			if r := retry(42, state, map[string]any{}); r.ResultType() != "input_required" || json.Unmarshal(r.Result, &again) != nil || again.RequestState == "" {
				t.Errorf("retry without an answer: want input_required with a state, got %.300s", r.Body)
			}
		})
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

// rowByID returns the row with id, failing the test if there is none.
func rowByID(t *testing.T, id string) hostileRow {
	t.Helper()
	for _, r := range hostileRows {
		if r.id == id {
			return r
		}
	}
	t.Fatalf("no hostile row %q", id)
	return hostileRow{}
}

// depthOf is the deepest nesting of arrays and objects in a JSON text.
func depthOf(b string) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString:
			inString = c != '"'
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// TestHostileBodies checks that the hostile bodies are what their rows say
// and that each benign twin is of like size.
func TestHostileBodies(t *testing.T) {
	env := &hostileEnv{baseState: strings.Repeat("s", 400)}
	ids := map[string]bool{}
	id := regexp.MustCompile(`^[a-z0-9-]+$`)
	for _, r := range hostileRows {
		if ids[r.id] || !id.MatchString(r.id) {
			t.Errorf("row id %q is a duplicate or not [a-z0-9-]+", r.id)
		}
		ids[r.id] = true
		hb := r.build(env)
		bb := benignBody(env, r.kind, len(hb), nil)
		if d := len(bb) - len(hb); d < -512 || d > 512 && d > len(hb)/50 {
			t.Errorf("%s: hostile body %d bytes, benign twin %d", r.id, len(hb), len(bb))
		}
		if r.id != "deep-over-200k" && !json.Valid([]byte(hb)) { // encoding/json stops at 10,000 levels
			t.Errorf("%s: not valid JSON: %.200s", r.id, hb)
		}
		if !json.Valid([]byte(bb)) || depthOf(bb) > serverMaxDepth {
			t.Errorf("%s: benign twin is not valid JSON within the depth limit", r.id)
		}
	}
	for id, want := range map[string]int{"deep-limit": serverMaxDepth, "deep-limit-obj": serverMaxDepth, "deep-over": serverMaxDepth + 1, "deep-over-200k": 200003} {
		if got := depthOf(rowByID(t, id).build(env)); got != want {
			t.Errorf("%s: depth %d, want %d", id, got, want)
		}
	}
	for id, want := range map[string]int{"size-limit": serverMaxBody, "size-over": serverMaxBody + 1} {
		if got := len(rowByID(t, id).build(env)); got != want {
			t.Errorf("%s: %d bytes, want %d", id, got, want)
		}
	}
	for id, want := range map[string]int{"state-limit": serverMaxState, "state-over": serverMaxState + 1} {
		var m struct {
			Params struct {
				RequestState string `json:"requestState"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(rowByID(t, id).build(env)), &m); err != nil || len(m.Params.RequestState) != want {
			t.Errorf("%s: state of %d bytes (%v), want %d", id, len(m.Params.RequestState), err, want)
		}
	}
}

// TestHostileAnswers checks, against the Baton server, that each kind of
// benign twin gets the answer the comparison assumes (so no row measures a
// refusal for an unrelated reason such as a header), and that hostile
// bodies the server already refuses cheaply get a clear error.
func TestHostileAnswers(t *testing.T) {
	urls, _, err := startServers()
	if err != nil {
		t.Fatal(err)
	}
	c := newHostileClient(urls["baton"], 10*time.Second)
	st, err := c.first(baseArgs)
	if err != nil {
		t.Fatal(err)
	}
	env := &hostileEnv{baseState: st}
	for _, k := range []rowKind{garbageState, noState, validState} {
		for _, size := range []int{300, 64 << 10, serverMaxBody + 10} {
			b := benignBody(env, k, size, c.first)
			a, _ := c.post([]byte(b))
			if !benignWanted(a, k, len(b)) {
				t.Errorf("benign %s body of %d bytes: got %s %s", k, len(b), a, a.msg)
			}
		}
	}
	for _, id := range []string{"deep-over", "state-limit", "state-over", "size-over", "dup-same-40k", "exp-answer", "vs-answer-exp"} {
		r := rowByID(t, id)
		a, _ := c.post([]byte(r.build(env)))
		if !a.clear(r.kind) {
			t.Errorf("%s: got %s %s, want a clear error", id, a, a.msg)
		}
	}
}
