package mcptest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// captured is one request as a handler saw it.
type captured struct {
	header http.Header
	body   map[string]json.RawMessage
	params map[string]json.RawMessage
	meta   map[string]json.RawMessage
	host   string
	path   string
}

// recorder records every request before passing it on to next.
type recorder struct {
	mu   sync.Mutex
	reqs []captured
	next http.Handler
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var c captured
	c.header, c.host, c.path = r.Header.Clone(), r.Host, r.URL.Path
	_ = json.Unmarshal(body, &c.body)
	_ = json.Unmarshal(c.body["params"], &c.params)
	_ = json.Unmarshal(c.params["_meta"], &c.meta)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, c)
	rec.mu.Unlock()
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	rec.next.ServeHTTP(w, r)
}

func (rec *recorder) all() []captured {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]captured(nil), rec.reqs...)
}

// Every request of a flow carries the envelope and the headers; retries
// carry the answers and the echoed state under a new id.
func TestEnvelopeAndHeaders(t *testing.T) {
	rec := &recorder{next: newServer(t, sharedKey)}
	c := newClient(t, mcptest.Handler(rec), &mcptest.Options{
		ClientInfo:  mcp.Implementation{Name: "suite", Version: "9.9"},
		Elicitation: user,
		LogLevel:    "warning",
		Header:      http.Header{"Authorization": {"Bearer t0ken"}},
	})
	res, err := c.CallTool(testContext(t), "ask_two", map[string]any{"x": 1}, mcptest.WithProgressToken("p"), mcptest.WithMeta("traceparent", "00-abc-def-01"))
	if err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	ids := map[string]bool{}
	for i, r := range reqs {
		for h, want := range map[string]string{
			"MCP-Protocol-Version": "2026-07-28",
			"Mcp-Method":           "tools/call",
			"Mcp-Name":             "ask_two",
			"Accept":               "application/json, text/event-stream",
			"Content-Type":         "application/json",
			"Authorization":        "Bearer t0ken",
		} {
			if got := r.header.Get(h); got != want {
				t.Fatalf("request %d: %s is %q, want %q", i+1, h, got, want)
			}
		}
		if r.host != "localhost" || r.path != "/mcp" {
			t.Fatalf("request %d went to %s%s", i+1, r.host, r.path)
		}
		for k, want := range map[string]string{
			"io.modelcontextprotocol/protocolVersion":    `"2026-07-28"`,
			"io.modelcontextprotocol/clientCapabilities": `{"elicitation":{"form":{},"url":{}}}`,
			"io.modelcontextprotocol/clientInfo":         `{"name":"suite","version":"9.9"}`,
			"io.modelcontextprotocol/logLevel":           `"warning"`,
			"progressToken":                              `"p"`,
			"traceparent":                                `"00-abc-def-01"`,
		} {
			if got := string(r.meta[k]); got != want {
				t.Fatalf("request %d: _meta %s is %s, want %s", i+1, k, got, want)
			}
		}
		if string(r.params["arguments"]) != `{"x":1}` || string(r.params["name"]) != `"ask_two"` {
			t.Fatalf("request %d params %s", i+1, r.body["params"])
		}
		id := string(r.body["id"])
		if ids[id] {
			t.Fatalf("request %d reuses id %s", i+1, id)
		}
		ids[id] = true
		_, hasState := r.params["requestState"]
		_, hasAnswers := r.params["inputResponses"]
		if (i == 0) == (hasState || hasAnswers) {
			t.Fatalf("request %d: requestState %v, inputResponses %v", i+1, hasState, hasAnswers)
		}
		if i > 0 {
			var state string
			_ = json.Unmarshal(r.params["requestState"], &state)
			if state != res.Exchange.Rounds[i-1].RequestState {
				t.Fatalf("request %d does not echo round %d's state", i+1, i)
			}
			var answers map[string]elicit.Result
			if err := json.Unmarshal(r.params["inputResponses"], &answers); err != nil || len(answers) != 1 {
				t.Fatalf("request %d answers %s", i+1, r.params["inputResponses"])
			}
		}
	}
}

func TestCapabilitiesFollowCallbacks(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts *mcptest.Options
		want string
	}{
		{"none", nil, `{}`},
		{"sampling and roots", &mcptest.Options{
			Sampling: func(context.Context, *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				return nil, nil
			},
			Roots: func(context.Context) (*mcp.ListRootsResult, error) { return nil, nil },
		}, `{"sampling":{},"roots":{}}`},
		{"explicit", &mcptest.Options{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, Elicitation: user}, `{"elicitation":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{next: newServer(t, sharedKey)}
			c := newClient(t, mcptest.Handler(rec), tc.opts)
			if _, err := c.Discover(testContext(t)); err != nil {
				t.Fatal(err)
			}
			r := rec.all()[0]
			if got := string(r.meta["io.modelcontextprotocol/clientCapabilities"]); got != tc.want {
				t.Fatalf("capabilities %s, want %s", got, tc.want)
			}
			if got := string(r.meta["io.modelcontextprotocol/clientInfo"]); got != `{"name":"mcptest","version":"1.0.0"}` {
				t.Fatalf("default clientInfo %s", got)
			}
			if _, ok := r.header["Mcp-Name"]; ok {
				t.Fatal("server/discover must not carry Mcp-Name")
			}
			if _, ok := r.meta["io.modelcontextprotocol/logLevel"]; ok {
				t.Fatal("no logLevel was asked for")
			}
		})
	}
}

// A value that is not plain ASCII travels base64-encoded, and the server
// decodes it to match the body.
func TestNonASCIIName(t *testing.T) {
	rec := &recorder{next: newServer(t, sharedKey)}
	c := newClient(t, mcptest.Handler(rec), nil)
	_, err := c.ReadResource(testContext(t), "file:///vault/café.txt")
	var rpcErr *mcptest.Error
	// The resource does not exist: the refusal proves the headers passed.
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || !strings.Contains(rpcErr.Message, "café") {
		t.Fatalf("error %v", err)
	}
	want := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("file:///vault/café.txt")) + "?="
	if got := rec.all()[0].header.Get("Mcp-Name"); got != want {
		t.Fatalf("Mcp-Name %q, want %q", got, want)
	}
}

func TestDoErrorPaths(t *testing.T) {
	srv := newServer(t, sharedKey)
	for name, target := range targets(t, srv) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, nil)
			for _, tc := range []struct {
				name   string
				method string
				params any
				opts   []mcptest.CallOption
				code   int
				status int
			}{
				{"unknown method", "tools/frobnicate", nil, nil, -32601, 404},
				{"unknown tool", "tools/call", map[string]any{"name": "nope"}, nil, -32602, 400},
				{"no envelope", "tools/list", map[string]any{"_meta": map[string]any{}}, nil, -32602, 400},
				{"old version", "tools/list", map[string]any{"_meta": map[string]any{
					"io.modelcontextprotocol/protocolVersion":    "1900-01-01",
					"io.modelcontextprotocol/clientCapabilities": map[string]any{},
				}}, []mcptest.CallOption{mcptest.WithHeader("MCP-Protocol-Version", "1900-01-01")}, -32022, 400},
				{"wrong Mcp-Name", "tools/call", map[string]any{"name": "greet"}, []mcptest.CallOption{mcptest.WithHeader("Mcp-Name", "other")}, -32020, 400},
				{"missing Mcp-Method", "tools/list", nil, []mcptest.CallOption{mcptest.WithoutHeader("Mcp-Method")}, -32020, 400},
				{"bad log level", "tools/list", nil, []mcptest.CallOption{mcptest.WithLogLevel("loud")}, -32602, 400},
			} {
				resp, err := c.Do(ctx, tc.method, tc.params, tc.opts...)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if resp.Error == nil || resp.Error.Code != tc.code || resp.Status != tc.status || resp.Error.Status != tc.status || resp.Result != nil {
					t.Fatalf("%s: status %d error %+v, want %d with %d", tc.name, resp.Status, resp.Error, tc.code, tc.status)
				}
				var rpcErr *mcptest.Error
				if !errors.As(resp.Err(), &rpcErr) || rpcErr.Code != tc.code || rpcErr.Round != 0 {
					t.Fatalf("%s: Err() = %v", tc.name, resp.Err())
				}
			}
			// Data comes as sent.
			resp, err := c.Do(ctx, "tools/list", map[string]any{"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": map[string]any{},
			}}, mcptest.WithHeader("MCP-Protocol-Version", "1900-01-01"))
			if err != nil || !strings.Contains(string(resp.Error.Data), `"requested":"1900-01-01"`) {
				t.Fatalf("data %s, %v", resp.Error.Data, err)
			}
			// An input_required result comes back as it is.
			asker := newClient(t, target, &mcptest.Options{Elicitation: user})
			resp, err = asker.Do(ctx, "tools/call", map[string]any{"name": "ask_one"})
			if err != nil || resp.Error != nil || resp.ResultType() != "input_required" || resp.Err() != nil {
				t.Fatalf("Do ask_one: %v %+v", err, resp)
			}
			// A success.
			resp, err = c.Do(ctx, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{}})
			if err != nil || resp.ResultType() != "complete" || !strings.Contains(string(resp.Result), "Hello") || string(resp.ID) == "" {
				t.Fatalf("Do greet: %v %+v", err, resp)
			}
		})
	}
}

func TestDoRaw(t *testing.T) {
	srv := newServer(t, sharedKey)
	for name, target := range targets(t, srv) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, nil)
			for _, tc := range []struct {
				name   string
				body   string
				opts   []mcptest.CallOption
				code   int
				status int
			}{
				{"not JSON", `{"jsonrpc":"2.0",`, nil, -32700, 400},
				{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`, nil, -32600, 400},
				{"no jsonrpc member", `{"id":1,"method":"tools/list","params":{}}`, nil, -32600, 400},
				{"too deep", strings.Repeat("[", 100) + strings.Repeat("]", 100), nil, -32700, 400},
				{"wrong content type", `{}`, []mcptest.CallOption{mcptest.WithHeader("Content-Type", "text/plain")}, -32600, 415},
			} {
				resp, err := c.DoRaw(ctx, []byte(tc.body), tc.opts...)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				if resp.Error == nil || resp.Error.Code != tc.code || resp.Status != tc.status {
					t.Fatalf("%s: status %d error %+v body %s", tc.name, resp.Status, resp.Error, resp.Body)
				}
			}
			// Mcp-Method and Mcp-Name are derived from a readable body.
			body := `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"greet","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			resp, err := c.DoRaw(ctx, []byte(body))
			if err != nil || resp.ResultType() != "complete" || string(resp.ID) != `"x"` {
				t.Fatalf("raw greet: %v %+v", err, resp)
			}
			// A notification is accepted with 202 and no body.
			resp, err = c.DoRaw(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`))
			if err != nil || resp.Status != http.StatusAccepted || resp.Result != nil || resp.Error != nil || len(resp.Body) != 0 {
				t.Fatalf("notification: %v %+v", err, resp)
			}
			if err := resp.Err(); err == nil || !strings.Contains(err.Error(), "HTTP 202") {
				t.Fatalf("Err of a response without a message: %v", err)
			}
		})
	}
}

func TestNewRefusesBadTargets(t *testing.T) {
	for name, target := range map[string]mcptest.Target{
		"nil handler":        mcptest.Handler(nil),
		"relative endpoint":  mcptest.URL("/mcp", nil),
		"ftp endpoint":       mcptest.URL("ftp://example.com/", nil),
		"bad handler URL":    mcptest.HandlerAt("::", http.NotFoundHandler()),
		"empty round robin":  mcptest.RoundRobin(),
		"nil in round robin": mcptest.RoundRobin(mcptest.Handler(http.NotFoundHandler()), nil),
		"bad in round robin": mcptest.RoundRobin(mcptest.URL("nope", nil)),
	} {
		if _, err := mcptest.New(target, nil); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := mcptest.New(nil, nil); err == nil {
		t.Error("New accepted a nil target")
	}
	c := newClient(t, mcptest.Handler(http.NotFoundHandler()), nil)
	if _, err := c.Do(testContext(t), "tools/list", nil, mcptest.WithProgressToken(1.5)); err == nil {
		t.Error("a fractional progress token was accepted")
	}
	if _, err := c.Do(testContext(t), "tools/list", []int{1}); err == nil {
		t.Error("params that are not an object were accepted")
	}
}

// fake answers every request with the next of responses (content type,
// body), each an SSE stream when the type says so.
func fake(t *testing.T, responses ...[2]string) http.Handler {
	var mu sync.Mutex
	i := 0
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n := i
		i++
		mu.Unlock()
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if n >= len(responses) {
			t.Errorf("unexpected request %d", n+1)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", responses[n][0])
		_, _ = io.WriteString(w, strings.ReplaceAll(responses[n][1], "$ID", string(req.ID)))
	})
}

func jsonBody(result string) [2]string {
	return [2]string{"application/json", `{"jsonrpc":"2.0","id":$ID,"result":` + result + `}`}
}

func sseBody(events ...string) [2]string {
	return [2]string{"text/event-stream", strings.Join(events, "")}
}

const complete = `{"resultType":"complete","content":[{"type":"text","text":"done"}]}`

func TestProtocolViolations(t *testing.T) {
	askName := `{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}},"requestState":"s"}`
	for _, tc := range []struct {
		name      string
		responses [][2]string
		opts      *mcptest.Options
		want      string
	}{
		{"no resultType", [][2]string{jsonBody(`{"content":[]}`)}, nil, "no resultType"},
		{"unknown resultType", [][2]string{jsonBody(`{"resultType":"later","content":[]}`)}, nil, `unknown resultType "later"`},
		{"a task without a taskId", [][2]string{jsonBody(`{"resultType":"task","content":[]}`)}, nil, `a task needs a taskId`},
		{"no content", [][2]string{jsonBody(`{"resultType":"complete"}`)}, nil, "content array"},
		{"empty input_required", [][2]string{jsonBody(`{"resultType":"input_required"}`)}, nil, "needs inputRequests or requestState"},
		{"undeclared elicitation", [][2]string{jsonBody(askName)}, nil, "did not declare"},
		{"url elicitation on form only", [][2]string{jsonBody(`{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"url","message":"Open","url":"https://example.com/"}}}}`)},
			&mcptest.Options{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, Elicitation: user}, "url elicitation"},
		{"legacy elicitationId", [][2]string{jsonBody(`{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"url","message":"Open","url":"https://example.com/","elicitationId":"e1"}}}}`)},
			&mcptest.Options{Elicitation: user}, "elicitationId"},
		{"unknown input method", [][2]string{jsonBody(`{"resultType":"input_required","inputRequests":{"k":{"method":"ping"}}}`)}, &mcptest.Options{Elicitation: user}, `method "ping"`},
		{"duplicate keys", [][2]string{jsonBody(`{"resultType":"input_required","inputRequests":{"k":{"method":"roots/list"},"k":{"method":"roots/list"}}}`)},
			&mcptest.Options{Roots: func(context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil }}, `repeats the key "k"`},
		{"invalid schema", [][2]string{jsonBody(`{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"message":"x","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}}}}`)},
			&mcptest.Options{Elicitation: user}, "invalid elicitation"},
		{"wrong id", [][2]string{{"application/json", `{"jsonrpc":"2.0","id":999,"result":{"resultType":"complete","content":[]}}`}}, nil, "id 999"},
		{"not JSON", [][2]string{{"application/json", `{"jsonrpc":`}}, nil, "unreadable"},
		{"result and error", [][2]string{{"application/json", `{"jsonrpc":"2.0","id":$ID,"result":{},"error":{"code":1,"message":"x"}}`}}, nil, "exactly one"},
		{"request on the stream", [][2]string{sseBody("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"elicitation/create\",\"params\":{}}\n\n")}, nil, "servers send no requests"},
		{"stream ends early", [][2]string{sseBody("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")}, nil, "ended before the response (1 notifications)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, mcptest.Handler(fake(t, tc.responses...)), tc.opts)
			_, err := c.CallTool(testContext(t), "t", nil)
			if !errors.Is(err, mcptest.ErrProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrProtocol saying %q", err, tc.want)
			}
		})
	}
}

// A state-only input_required (load shedding) is retried at once with the
// new state and no answers, not even the previous round's; SSE framing
// details are tolerated.
func TestStateOnlyRetryAndSSEFraming(t *testing.T) {
	rec := &recorder{next: fake(t,
		jsonBody(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"first"}`),
		jsonBody(`{"resultType":"input_required","requestState":"shed-1"}`),
		sseBody(
			": keep-alive\r\n\r\n",
			"event: other\ndata: ignored\n\n",
			"id: 1\nretry: 100\ndata: {\"jsonrpc\":\"2.0\",\n",
			"data: \"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":{\"a\":1}}}\n\n",
			"event: message\ndata:{\"jsonrpc\":\"2.0\",\"id\":$ID,\"result\":"+complete+"}\n\n",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"after/the/end\"}\n\n",
		),
	)}
	c := newClient(t, mcptest.Handler(rec), &mcptest.Options{Roots: func(context.Context) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
	}})
	res, err := c.CallTool(testContext(t), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "done" || len(res.Exchange.Rounds) != 3 || res.Exchange.Rounds[1].RequestState != "shed-1" {
		t.Fatalf("result %+v", res)
	}
	logs := res.Exchange.Logs()
	if len(logs) != 1 || string(logs[0].Data) != `{"a":1}` || len(res.Exchange.Notifications()) != 1 {
		t.Fatalf("logs %+v", logs)
	}
	if answered := rec.all()[1].params; string(answered["inputResponses"]) != `{"r":{"roots":[]}}` || string(answered["requestState"]) != `"first"` {
		t.Fatalf("round 2 sent %s with %s", answered["inputResponses"], answered["requestState"])
	}
	retry := rec.all()[2].params
	if string(retry["requestState"]) != `"shed-1"` {
		t.Fatalf("retry state %s", retry["requestState"])
	}
	if _, ok := retry["inputResponses"]; ok {
		t.Fatalf("a state-only retry sent inputResponses %s", retry["inputResponses"])
	}
}

// An error response in a later round keeps its round and status.
func TestErrorInLaterRound(t *testing.T) {
	h := fake(t,
		jsonBody(`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"s1"}`),
		[2]string{"application/json", `{"jsonrpc":"2.0","id":$ID,"error":{"code":-32603,"message":"boom","data":{"why":"test"}}}`},
	)
	c := newClient(t, mcptest.Handler(h), &mcptest.Options{Roots: func(context.Context) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []mcp.Root{}}, nil
	}})
	_, err := c.CallTool(testContext(t), "t", nil)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("error %v", err)
	}
	if rpcErr.Round != 2 || rpcErr.Code != -32603 || rpcErr.Message != "boom" || string(rpcErr.Data) != `{"why":"test"}` || rpcErr.Status != 200 {
		t.Fatalf("error %+v", rpcErr)
	}
	if got := rpcErr.Error(); got != "JSON-RPC error -32603: boom (HTTP 200) in round 2" {
		t.Fatalf("message %q", got)
	}
}

// The in-process target maps a handler's panic to an error, before or
// after the response started.
func TestHandlerPanic(t *testing.T) {
	ctx := testContext(t)
	before := newClient(t, mcptest.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("kaboom") })), nil)
	if _, err := before.Do(ctx, "tools/list", nil); err == nil || !strings.Contains(err.Error(), "kaboom") {
		t.Fatalf("panic before writing: %v", err)
	}
	after := newClient(t, mcptest.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, ": started\n\n")
		panic(http.ErrAbortHandler)
	})), nil)
	if _, err := after.Do(ctx, "tools/list", nil); err == nil || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("abort after writing: %v", err)
	}
}

// Cancelling the call cancels the handler's context, and the call returns
// once the handler has returned.
func TestCancellationReachesHandler(t *testing.T) {
	started := make(chan struct{})
	var handlerErr error
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
		handlerErr = r.Context().Err()
	})
	c := newClient(t, mcptest.Handler(h), nil)
	ctx, cancel := context.WithCancel(testContext(t))
	go func() {
		<-started
		cancel()
	}()
	_, err := c.Do(ctx, "tools/list", nil)
	if err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	if !errors.Is(handlerErr, context.Canceled) {
		t.Fatalf("the handler saw %v", handlerErr)
	}
}

// Once the client has the response, the handler's writes fail and a
// ResponseController flush reports it.
func TestWritesAfterCloseFail(t *testing.T) {
	writeErr := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resultType\":\"complete\"}}\n\n")
		<-r.Context().Done() // the client closes the body after the response
		_, err := io.WriteString(w, "data: late\n\n")
		if ferr := http.NewResponseController(w).Flush(); ferr == nil {
			err = errors.New("flush after close succeeded")
		}
		writeErr <- err
	})
	c := newClient(t, mcptest.Handler(h), nil)
	resp, err := c.Do(testContext(t), "tools/list", nil)
	if err != nil || resp.ResultType() != "complete" {
		t.Fatalf("%v %+v", err, resp)
	}
	if err := <-writeErr; err == nil {
		t.Fatal("a write after the client closed succeeded")
	}
}

func TestAcceptHelper(t *testing.T) {
	r, err := mcptest.Accept(nil)
	if err != nil || r.Action != elicit.ActionAccept || r.Content != nil {
		t.Fatalf("Accept(nil): %+v %v", r, err)
	}
	if _, err := mcptest.Accept([]string{"a"}); err == nil {
		t.Fatal("Accept of a non-object succeeded")
	}
	if _, err := mcptest.Accept(map[string]any{"c": make(chan int)}); err == nil {
		t.Fatal("Accept of an unencodable value succeeded")
	}
	type form struct {
		Name string `json:"name"`
	}
	r, err = mcptest.Accept(form{Name: "Bo"})
	if err != nil || string(r.Content) != `{"name":"Bo"}` {
		t.Fatalf("Accept(struct): %s %v", r.Content, err)
	}
}

// Every page of a list is fetched, and a cursor that repeats is refused.
func TestListPagingGuards(t *testing.T) {
	h := fake(t,
		jsonBody(`{"resultType":"complete","tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c1"}`),
		jsonBody(`{"resultType":"complete","tools":[{"name":"b","inputSchema":{"type":"object"}}],"nextCursor":"c1"}`),
	)
	c := newClient(t, mcptest.Handler(h), nil)
	if _, err := c.ListTools(testContext(t)); !errors.Is(err, mcptest.ErrProtocol) || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("error %v", err)
	}
	irr := fake(t, jsonBody(`{"resultType":"input_required","requestState":"s"}`))
	c = newClient(t, mcptest.Handler(irr), nil)
	if _, err := c.ListTools(testContext(t)); !errors.Is(err, mcptest.ErrProtocol) || !strings.Contains(err.Error(), "must complete") {
		t.Fatalf("input_required list: %v", err)
	}
}

// A URL target reaches a real listener; a refused connection is an error,
// not a panic.
func TestURLTargetTransportError(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close()
	c := newClient(t, mcptest.URL(url, nil), nil)
	if _, err := c.Do(testContext(t), "tools/list", nil); err == nil || !strings.Contains(err.Error(), "sending the request") {
		t.Fatalf("error %v", err)
	}
}

// The tasks extension's tasks/get, tasks/update and tasks/cancel name
// their task in Mcp-Name, as the server checks: Do derives it from
// params.taskId.
func TestTaskMethodsCarryMcpName(t *testing.T) {
	ring, err := mrtr.NewKeyRing(sharedKey)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, &server.Options{StateKeys: ring, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	if err := srv.AddTool(server.Tool{Name: "slow"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("done"), nil
	}, server.RunAsTask(server.TaskRequired)); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: srv}
	c := newClient(t, mcptest.Handler(rec), &mcptest.Options{Capabilities: &mcp.ClientCapabilities{
		Extensions: map[string]json.RawMessage{mcp.TasksExtension: json.RawMessage(`{}`)},
	}})
	ctx := testContext(t)
	resp, err := c.Do(ctx, "tools/call", map[string]any{"name": "slow"})
	if err != nil || resp.ResultType() != "task" {
		t.Fatalf("tools/call: %v %+v", err, resp)
	}
	var created struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(resp.Result, &created); err != nil || created.TaskID == "" {
		t.Fatalf("no taskId in %s", resp.Result)
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		params := map[string]any{"taskId": created.TaskID}
		if method == "tasks/update" {
			params["inputResponses"] = map[string]any{}
		}
		resp, err := c.Do(ctx, method, params)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		// A header mismatch would be -32020; anything else proves the
		// headers passed.
		if resp.Error != nil && resp.Error.Code == -32020 {
			t.Fatalf("%s: %v", method, resp.Error)
		}
		reqs := rec.all()
		if got := reqs[len(reqs)-1].header.Get("Mcp-Name"); got != created.TaskID {
			t.Fatalf("%s: Mcp-Name %q, want the task id %q", method, got, created.TaskID)
		}
	}
}

// WithHeader("Host", …) sets the request's Host, so a test can reach a
// server's Host checks in process and over a real connection.
func TestHostHeader(t *testing.T) {
	ring, err := mrtr.NewKeyRing(sharedKey)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(mcp.Implementation{Name: "hosts", Version: "1"}, &server.Options{
		StateKeys: ring, Logger: slog.New(slog.DiscardHandler), AllowedHosts: []string{"mcp.example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: srv}
	for name, target := range targets(t, rec) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, nil)
			resp, err := c.Do(ctx, "server/discover", nil)
			if err != nil || resp.Status != http.StatusForbidden {
				t.Fatalf("the endpoint's Host: %v %+v, want 403", err, resp)
			}
			resp, err = c.Do(ctx, "server/discover", nil, mcptest.WithHeader("Host", "mcp.example.com"))
			if err != nil || resp.ResultType() != "complete" {
				t.Fatalf("Host mcp.example.com: %v %+v", err, resp)
			}
			last := rec.all()[len(rec.all())-1]
			if last.host != "mcp.example.com" || last.header.Get("Host") != "" {
				t.Fatalf("the server saw Host %q and a Host header %q", last.host, last.header.Get("Host"))
			}
		})
	}
}

// WithID chooses the id of a request (the first of a multi-round call);
// the response must echo it.
func TestWithID(t *testing.T) {
	rec := &recorder{next: newServer(t, sharedKey)}
	c := newClient(t, mcptest.Handler(rec), &mcptest.Options{Elicitation: user})
	ctx := testContext(t)
	resp, err := c.Do(ctx, "tools/list", nil, mcptest.WithID("list-1"))
	if err != nil || string(resp.ID) != `"list-1"` || resp.Result == nil {
		t.Fatalf("Do: %v %+v", err, resp)
	}
	if _, err := c.CallTool(ctx, "ask_one", nil, mcptest.WithID(7)); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if len(reqs) != 3 || string(reqs[1].body["id"]) != "7" || string(reqs[2].body["id"]) == "7" {
		t.Fatalf("ids %s, %s: want 7, then another", reqs[1].body["id"], reqs[2].body["id"])
	}
	if _, err := c.Do(ctx, "tools/list", nil, mcptest.WithID(1.5)); err == nil || !strings.Contains(err.Error(), "string or an integer") {
		t.Fatalf("a fractional id: %v", err)
	}
}
