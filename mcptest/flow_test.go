package mcptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// waitLimit bounds every test's context: a guard against hangs, never a
// pause.
const waitLimit = 20 * time.Second

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

var sharedKey = mrtr.Key{ID: "shared", Secret: []byte("mcptest-shared-secret-0123456789abcdef")}

// form builds a one-field form or fails the test.
func form(t testing.TB, message string, f *elicit.Field) *elicit.Request {
	t.Helper()
	r, err := elicit.NewForm(message, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newServer returns a server with the fixture tools, signing state with
// key. Every tool asks in the sequential style: each ask returns the
// recorded answer, or ends the round with input_required.
func newServer(t testing.TB, key mrtr.Key) *server.Server {
	t.Helper()
	ring, err := mrtr.NewKeyRing(key)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(mcp.Implementation{Name: "fixture", Version: "1.0.0"},
		&server.Options{StateKeys: ring, Logger: slog.New(slog.DiscardHandler), PageSize: 2, Logging: true, Instructions: "Ask me things"})
	if err != nil {
		t.Fatal(err)
	}
	nameQ := form(t, "Your name?", elicit.String("name").MinLength(1).Required())
	colorQ := form(t, "Favourite colour?", elicit.Enum("color", "red", "green", "blue").Required())
	sureQ := form(t, "Sure?", elicit.Boolean("sure").Required())
	type answers struct {
		Name  string `json:"name"`
		Color string `json:"color"`
		Sure  bool   `json:"sure"`
	}
	// ask asks the questions in turn; stop reports a decline or cancel.
	ask := func(ctx context.Context, req *server.ToolRequest, qs ...*elicit.Request) (a answers, stop *server.ToolResult, err error) {
		for _, q := range qs {
			res, err := req.Elicit(ctx, q)
			if err != nil {
				return a, nil, err
			}
			if res.Action != elicit.ActionAccept {
				return a, server.ErrorResult(fmt.Sprintf("%s: %s", q.Message, res.Action)), nil
			}
			if err := res.Decode(&a); err != nil {
				return a, nil, err
			}
		}
		return a, nil, nil
	}
	add := func(name string, h server.ToolHandler) {
		t.Helper()
		if err := srv.AddTool(server.Tool{Name: name, Description: "fixture " + name}, h); err != nil {
			t.Fatal(err)
		}
	}
	add("greet", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("Hello"), nil
	})
	add("ask_one", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		a, stop, err := ask(ctx, req, nameQ)
		if err != nil || stop != nil {
			return stop, err
		}
		return server.TextResult("Hello, " + a.Name), nil
	})
	add("ask_two", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		a, stop, err := ask(ctx, req, nameQ, colorQ)
		if err != nil || stop != nil {
			return stop, err
		}
		return server.TextResult(a.Name + " likes " + a.Color), nil
	})
	if err := srv.AddTool(server.Tool{
		Name:         "ask_three",
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},"color":{"type":"string"},"sure":{"type":"boolean"}},"required":["name","color","sure"]}`),
	}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		a, stop, err := ask(ctx, req, nameQ, colorQ, sureQ)
		if err != nil || stop != nil {
			return stop, err
		}
		b, _ := json.Marshal(a)
		return &server.ToolResult{Content: []mcp.Block{mcp.Text(string(b))}, StructuredContent: a}, nil
	}); err != nil {
		t.Fatal(err)
	}
	// forever asks a new question on every round.
	add("forever", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		for i := 0; ; i++ {
			if _, err := req.Elicit(ctx, form(t, fmt.Sprintf("Question %d?", i), elicit.String("x"))); err != nil {
				return nil, err
			}
		}
	})
	add("chatty", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		_ = req.Progress(ctx, 1, 2, "before the question")
		_ = req.Log(ctx, slog.LevelInfo, "chatty", "asking")
		a, stop, err := ask(ctx, req, nameQ)
		if err != nil || stop != nil {
			return stop, err
		}
		_ = req.Progress(ctx, 2, 2, "answered")
		_ = req.Log(ctx, slog.LevelDebug, "chatty", "debug detail")
		return server.TextResult("Hello, " + a.Name), nil
	})
	add("sample", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		out, err := req.CreateMessage(ctx, &mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{mcp.UserText("Capital of France?")},
			MaxTokens: 10,
		})
		if err != nil {
			return nil, err
		}
		return server.TextResult("The model said " + out.Text()), nil
	})
	add("roots", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		out, err := req.ListRoots(ctx)
		if err != nil {
			return nil, err
		}
		var uris []string
		for _, r := range out.Roots {
			uris = append(uris, r.URI)
		}
		return server.TextResult(strings.Join(uris, ",")), nil
	})
	if err := srv.AddPrompt(server.Prompt{Name: "intro", Description: "Introduces the user"},
		func(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
			res, err := req.Elicit(ctx, nameQ)
			if err != nil {
				return nil, err
			}
			var a answers
			if err := res.Decode(&a); err != nil {
				return nil, err
			}
			return &server.PromptResult{Description: "intro", Messages: []server.PromptMessage{
				{Role: mcp.RoleUser, Content: mcp.Text("I am " + a.Name + ", topic " + req.Arguments["topic"])},
			}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddResource(server.Resource{URI: "file:///vault/secret.txt", Name: "secret", MimeType: "text/plain"},
		func(ctx context.Context, req *server.ResourceRequest) (*server.ResourceResult, error) {
			res, err := req.Elicit(ctx, sureQ)
			if err != nil {
				return nil, err
			}
			var a answers
			if res.Action != elicit.ActionAccept || res.Decode(&a) != nil || !a.Sure {
				return nil, server.ResourceNotFound(req.URI)
			}
			return &server.ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(req.URI, "text/plain", "the secret")}}, nil
		}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// user answers the fixture's questions: name Alice, colour green, sure.
func user(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
	switch req.Message {
	case "Your name?":
		return mcptest.Accept(map[string]any{"name": "Alice"})
	case "Favourite colour?":
		return mcptest.Accept(map[string]any{"color": "green"})
	case "Sure?":
		return mcptest.Accept(map[string]any{"sure": true})
	}
	return nil, fmt.Errorf("unexpected question %q", req.Message)
}

func newClient(t testing.TB, target mcptest.Target, opts *mcptest.Options) *mcptest.Client {
	t.Helper()
	c, err := mcptest.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// targets returns the ways to reach srv: in process and over loopback
// HTTP.
func targets(t *testing.T, srv http.Handler) map[string]mcptest.Target {
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return map[string]mcptest.Target{
		"in-process": mcptest.Handler(srv),
		"http":       mcptest.URL(ts.URL, ts.Client()),
	}
}

func TestRoundsOneTwoThreeQuestions(t *testing.T) {
	srv := newServer(t, sharedKey)
	for name, target := range targets(t, srv) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, &mcptest.Options{Elicitation: user})
			for _, tc := range []struct {
				tool      string
				want      string
				questions []string
			}{
				{"greet", "Hello", nil},
				{"ask_one", "Hello, Alice", []string{"Your name?"}},
				{"ask_two", "Alice likes green", []string{"Your name?", "Favourite colour?"}},
				{"ask_three", `{"name":"Alice","color":"green","sure":true}`, []string{"Your name?", "Favourite colour?", "Sure?"}},
			} {
				res, err := c.CallTool(ctx, tc.tool, map[string]any{})
				if err != nil {
					t.Fatalf("%s: %v", tc.tool, err)
				}
				if res.IsError || res.Text() != tc.want {
					t.Fatalf("%s: %q (isError %v), want %q", tc.tool, res.Text(), res.IsError, tc.want)
				}
				rounds := res.Exchange.Rounds
				if len(rounds) != len(tc.questions)+1 {
					t.Fatalf("%s: %d rounds, want %d", tc.tool, len(rounds), len(tc.questions)+1)
				}
				for i, q := range tc.questions {
					r := rounds[i]
					if len(r.InputRequests) != 1 || r.InputRequests[0].Elicitation == nil || r.InputRequests[0].Elicitation.Message != q {
						t.Fatalf("%s round %d asked %+v, want %q", tc.tool, i+1, r.InputRequests, q)
					}
					if r.RequestState == "" || r.Status != http.StatusOK {
						t.Fatalf("%s round %d: state %q status %d", tc.tool, i+1, r.RequestState, r.Status)
					}
					key := r.InputRequests[0].Key
					var sent elicit.Result
					if err := json.Unmarshal(r.InputResponses[key], &sent); err != nil || sent.Action != elicit.ActionAccept {
						t.Fatalf("%s round %d sent %s for %q", tc.tool, i+1, r.InputResponses[key], key)
					}
				}
				last := rounds[len(rounds)-1]
				if last.InputRequests != nil || last.RequestState != "" || last.InputResponses != nil {
					t.Fatalf("%s: the last round records a question: %+v", tc.tool, last)
				}
			}
		})
	}
}

// The answers gathered so far ride in the state, so it grows with each
// question, and round 3's state carries two answers round 2's did not.
func TestStateGrowsWithAnswers(t *testing.T) {
	c := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{Elicitation: user})
	res, err := c.CallTool(testContext(t), "ask_three", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Exchange.Rounds
	if !(len(r[0].RequestState) < len(r[1].RequestState) && len(r[1].RequestState) < len(r[2].RequestState)) {
		t.Fatalf("state sizes %d, %d, %d: each round should carry one more answer", len(r[0].RequestState), len(r[1].RequestState), len(r[2].RequestState))
	}
	if strings.Contains(r[1].RequestState, "Alice") {
		t.Fatal("the state reveals an answer")
	}
}

func TestStructuredContentDecode(t *testing.T) {
	c := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{Elicitation: user})
	ctx := testContext(t)
	res, err := c.CallTool(ctx, "ask_three", nil)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Name  string
		Color string
		Sure  bool
	}
	if err := res.Decode(&out); err != nil || out.Name != "Alice" || out.Color != "green" || !out.Sure {
		t.Fatalf("Decode: %+v, %v (structuredContent %s)", out, err, res.StructuredContent)
	}
	if _, ok := res.Meta["io.modelcontextprotocol/serverInfo"]; !ok {
		t.Fatalf("_meta: %v", res.Meta)
	}
	plain, err := c.CallTool(ctx, "greet", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Decode(&out); err == nil {
		t.Fatal("Decode of a result without structuredContent must fail")
	}
}

// A flow moves between two instances that share only the key: every
// request goes to the other one.
func TestRoundRobinAcrossInstances(t *testing.T) {
	var mu sync.Mutex
	var served []string
	counted := func(name string, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			served = append(served, name)
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	a := counted("a", newServer(t, sharedKey))
	b := counted("b", newServer(t, sharedKey))
	tsA, tsB := httptest.NewServer(a), httptest.NewServer(b)
	t.Cleanup(tsA.Close)
	t.Cleanup(tsB.Close)
	for name, target := range map[string]mcptest.Target{
		"in-process": mcptest.RoundRobin(mcptest.Handler(a), mcptest.Handler(b)),
		"http":       mcptest.RoundRobin(mcptest.URL(tsA.URL, tsA.Client()), mcptest.URL(tsB.URL, tsB.Client())),
	} {
		t.Run(name, func(t *testing.T) {
			mu.Lock()
			served = nil
			mu.Unlock()
			c := newClient(t, target, &mcptest.Options{Elicitation: user})
			res, err := c.CallTool(testContext(t), "ask_three", nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Text() != `{"name":"Alice","color":"green","sure":true}` {
				t.Fatalf("result %q", res.Text())
			}
			mu.Lock()
			defer mu.Unlock()
			if got := strings.Join(served, ","); got != "a,b,a,b" {
				t.Fatalf("served by %s, want a,b,a,b", got)
			}
		})
	}
}

// An instance with another key refuses the first instance's state: the
// error names the round and carries the code and status.
func TestRoundRobinForeignKey(t *testing.T) {
	other := mrtr.Key{ID: "other", Secret: []byte("another-secret-another-secret-0123456789")}
	target := mcptest.RoundRobin(mcptest.Handler(newServer(t, sharedKey)), mcptest.Handler(newServer(t, other)))
	c := newClient(t, target, &mcptest.Options{Elicitation: user})
	_, err := c.CallTool(testContext(t), "ask_two", nil)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("error %v is not a *mcptest.Error", err)
	}
	if rpcErr.Code != -32602 || rpcErr.Round != 2 || rpcErr.Status != http.StatusBadRequest || !strings.Contains(rpcErr.Message, "requestState") {
		t.Fatalf("error %+v", rpcErr)
	}
	if !strings.Contains(err.Error(), "tools/call ask_two") || !strings.Contains(err.Error(), "round 2") {
		t.Fatalf("message %q", err)
	}
}

func TestDeclineAndCancel(t *testing.T) {
	srv := newServer(t, sharedKey)
	for _, tc := range []struct {
		name   string
		answer func() (*elicit.Result, error)
		want   string
	}{
		{"decline", mcptest.Decline, "Favourite colour?: decline"},
		{"cancel", mcptest.Cancel, "Favourite colour?: cancel"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Accept the name, then refuse the colour.
			c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
				if req.Message == "Favourite colour?" {
					return tc.answer()
				}
				return user(ctx, req)
			}})
			res, err := c.CallTool(testContext(t), "ask_three", nil)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || res.Text() != tc.want || len(res.Exchange.Rounds) != 3 {
				t.Fatalf("%q (isError %v) after %d rounds", res.Text(), res.IsError, len(res.Exchange.Rounds))
			}
		})
	}
}

// A callback's error ends the call with that error.
func TestCallbackError(t *testing.T) {
	boom := errors.New("the user closed the window")
	c := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
		return nil, boom
	}})
	_, err := c.CallTool(testContext(t), "ask_one", nil)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "round 1") {
		t.Fatalf("error %v", err)
	}
	nilResult := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
		return nil, nil
	}})
	if _, err := nilResult.CallTool(testContext(t), "ask_one", nil); err == nil || !strings.Contains(err.Error(), "no result") {
		t.Fatalf("nil result: %v", err)
	}
}

// An answer the server must refuse is sent as given, and the refusal is a
// *Error.
func TestInvalidAnswerReachesServer(t *testing.T) {
	c := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
		return mcptest.Accept(map[string]any{"name": ""}) // minLength 1
	}})
	_, err := c.CallTool(testContext(t), "ask_one", nil)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Round != 2 || !strings.Contains(rpcErr.Message, "name") {
		t.Fatalf("error %v", err)
	}
}

func TestMaxRounds(t *testing.T) {
	ctx := testContext(t)
	c := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{
		Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"x": "y"})
		},
		MaxRounds: 3,
	})
	_, err := c.CallTool(ctx, "forever", nil)
	if !errors.Is(err, mcptest.ErrTooManyRounds) || !strings.Contains(err.Error(), "3 requests") {
		t.Fatalf("error %v", err)
	}
	// The default bound holds too.
	d := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{
		Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"x": "y"})
		},
	})
	if _, err := d.CallTool(ctx, "forever", nil); !errors.Is(err, mcptest.ErrTooManyRounds) || !strings.Contains(err.Error(), "after 10 requests") {
		t.Fatalf("default bound: %v", err)
	}
	if _, err := mcptest.New(mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{MaxRounds: -1}); err == nil {
		t.Fatal("a negative MaxRounds must be refused")
	}
}

// Declaring elicitation without a callback gets a clear error; declaring
// nothing gets the server's -32021.
func TestMissingCallbackAndCapability(t *testing.T) {
	srv := newServer(t, sharedKey)
	ctx := testContext(t)
	declared := newClient(t, mcptest.Handler(srv), &mcptest.Options{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}})
	_, err := declared.CallTool(ctx, "ask_one", nil)
	if !errors.Is(err, mcptest.ErrNoCallback) || !strings.Contains(err.Error(), "Options.Elicitation") {
		t.Fatalf("declared without callback: %v", err)
	}
	none := newClient(t, mcptest.Handler(srv), nil)
	_, err = none.CallTool(ctx, "ask_one", nil)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32021 || rpcErr.Status != http.StatusBadRequest {
		t.Fatalf("undeclared: %v", err)
	}
	var data struct {
		RequiredCapabilities mcp.ClientCapabilities `json:"requiredCapabilities"`
	}
	if err := json.Unmarshal(rpcErr.Data, &data); err != nil || data.RequiredCapabilities.Elicitation == nil {
		t.Fatalf("data %s: %v", rpcErr.Data, err)
	}
	for _, tool := range []string{"sample", "roots"} {
		_, err = declared.CallTool(ctx, tool, nil)
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32021 {
			t.Fatalf("%s undeclared: %v", tool, err)
		}
	}
}

func TestSamplingAndRoots(t *testing.T) {
	var sawKey string
	c := newClient(t, mcptest.Handler(newServer(t, sharedKey)), &mcptest.Options{
		Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			sawKey = mcptest.InputKey(ctx)
			if p.MaxTokens != 10 || len(p.Messages) != 1 {
				return nil, fmt.Errorf("unexpected request %+v", p)
			}
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []mcp.Block{mcp.Text("Paris")}, Model: "test-model"}, nil
		},
		Roots: func(context.Context) (*mcp.ListRootsResult, error) {
			return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///src", Name: "src"}, {URI: "file:///docs"}}}, nil
		},
	})
	ctx := testContext(t)
	res, err := c.CallTool(ctx, "sample", nil)
	if err != nil || res.Text() != "The model said Paris" {
		t.Fatalf("sample: %v %+v", err, res)
	}
	ir := res.Exchange.Rounds[0].InputRequests[0]
	if ir.Method != "sampling/createMessage" || ir.Sampling == nil || sawKey != ir.Key || sawKey == "" {
		t.Fatalf("sampling request %+v, key seen %q", ir, sawKey)
	}
	res, err = c.CallTool(ctx, "roots", nil)
	if err != nil || res.Text() != "file:///src,file:///docs" {
		t.Fatalf("roots: %v %+v", err, res)
	}
	if ir := res.Exchange.Rounds[0].InputRequests[0]; ir.Method != "roots/list" {
		t.Fatalf("roots request %+v", ir)
	}
}

func TestPromptAndResourceRounds(t *testing.T) {
	for name, target := range targets(t, newServer(t, sharedKey)) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, &mcptest.Options{Elicitation: user})
			p, err := c.GetPrompt(ctx, "intro", map[string]string{"topic": "Go"})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Messages) != 1 || p.Messages[0].Content.Text != "I am Alice, topic Go" || p.Messages[0].Role != mcp.RoleUser || len(p.Exchange.Rounds) != 2 {
				t.Fatalf("prompt %+v", p)
			}
			r, err := c.ReadResource(ctx, "file:///vault/secret.txt")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Contents) != 1 || r.Contents[0].Text != "the secret" || len(r.Exchange.Rounds) != 2 {
				t.Fatalf("resource %+v", r)
			}
			decline := newClient(t, target, &mcptest.Options{Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) { return mcptest.Decline() }})
			_, err = decline.ReadResource(ctx, "file:///vault/secret.txt")
			var rpcErr *mcptest.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Round != 2 {
				t.Fatalf("declined read: %v", err)
			}
		})
	}
}

func TestProgressAndLogNotifications(t *testing.T) {
	for name, target := range targets(t, newServer(t, sharedKey)) {
		t.Run(name, func(t *testing.T) {
			var live []string
			c := newClient(t, target, &mcptest.Options{
				Elicitation:    user,
				LogLevel:       "info",
				OnNotification: func(n mcptest.Notification) { live = append(live, n.Method) },
			})
			res, err := c.CallTool(testContext(t), "chatty", nil, mcptest.WithProgressToken("tok-1"))
			if err != nil {
				t.Fatal(err)
			}
			rounds := res.Exchange.Rounds
			if len(rounds) != 2 || !rounds[0].Streamed || !rounds[1].Streamed {
				t.Fatalf("rounds %+v", rounds)
			}
			// Round 1 streams progress and a log before its question;
			// round 2 runs the handler again from the top, so it streams
			// them again, then the second progress. The debug log is
			// below the requested level.
			prog := res.Exchange.Progress()
			var msgs []string
			for _, p := range prog {
				if string(p.Token) != `"tok-1"` || p.Total != 2 {
					t.Fatalf("progress %+v", p)
				}
				msgs = append(msgs, p.Message)
			}
			if want := []string{"before the question", "before the question", "answered"}; !slices.Equal(msgs, want) {
				t.Fatalf("progress messages %q, want %q", msgs, want)
			}
			logs := res.Exchange.Logs()
			if len(logs) != 2 || logs[0].Level != "info" || logs[0].Logger != "chatty" || string(logs[0].Data) != `"asking"` {
				t.Fatalf("logs %+v", logs)
			}
			if len(live) != len(res.Exchange.Notifications()) || len(live) != 5 {
				t.Fatalf("live notifications %q, recorded %d", live, len(res.Exchange.Notifications()))
			}
			// Without a token or a level, nothing streams.
			quiet := newClient(t, target, &mcptest.Options{Elicitation: user})
			res, err = quiet.CallTool(testContext(t), "chatty", nil)
			if err != nil {
				t.Fatal(err)
			}
			if n := res.Exchange.Notifications(); len(n) != 0 || res.Exchange.Rounds[0].Streamed {
				t.Fatalf("notifications without token or level: %+v", n)
			}
		})
	}
}

// A notification reaches the client while the handler still runs: the
// handler waits for the client to have seen its progress, which only a
// streaming target delivers.
func TestNotificationsStreamLive(t *testing.T) {
	srv, err := server.New(mcp.Implementation{Name: "live", Version: "1"}, &server.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	if err := srv.AddTool(server.Tool{Name: "wait"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		if err := req.Progress(ctx, 1, 0, "started"); err != nil {
			return nil, err
		}
		select {
		case <-seen:
			return server.TextResult("the client saw the progress first"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}); err != nil {
		t.Fatal(err)
	}
	for name, target := range targets(t, srv) {
		t.Run(name, func(t *testing.T) {
			seen = make(chan struct{})
			c := newClient(t, target, &mcptest.Options{OnNotification: func(n mcptest.Notification) {
				if p, ok := n.Progress(); ok && p.Message == "started" {
					close(seen)
				}
			}})
			res, err := c.CallTool(testContext(t), "wait", nil, mcptest.WithProgressToken(7))
			if err != nil || res.Text() != "the client saw the progress first" {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
}

func TestListsAndDiscover(t *testing.T) {
	for name, target := range targets(t, newServer(t, sharedKey)) {
		t.Run(name, func(t *testing.T) {
			ctx := testContext(t)
			c := newClient(t, target, nil)
			d, err := c.Discover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(d.SupportedVersions, mcp.ProtocolVersion) || d.ServerInfo.Name != "fixture" || d.Instructions != "Ask me things" || d.TTLMs == nil || d.CacheScope == "" {
				t.Fatalf("discover %+v", d)
			}
			if _, ok := d.Capabilities["tools"]; !ok {
				t.Fatalf("capabilities %v", d.Capabilities)
			}
			// PageSize is 2: the eight tools come in four pages.
			tools, err := c.ListTools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range tools {
				names = append(names, tool.Name)
			}
			slices.Sort(names)
			want := []string{"ask_one", "ask_three", "ask_two", "chatty", "forever", "greet", "roots", "sample"}
			if !slices.Equal(names, want) {
				t.Fatalf("tools %q, want %q", names, want)
			}
			for _, tool := range tools {
				if tool.Name == "ask_three" && !strings.Contains(string(tool.OutputSchema), `"sure"`) {
					t.Fatalf("ask_three output schema %s", tool.OutputSchema)
				}
				if len(tool.InputSchema) == 0 {
					t.Fatalf("%s has no input schema", tool.Name)
				}
			}
			prompts, err := c.ListPrompts(ctx)
			if err != nil || len(prompts) != 1 || prompts[0].Name != "intro" {
				t.Fatalf("prompts %+v %v", prompts, err)
			}
			resources, err := c.ListResources(ctx)
			if err != nil || len(resources) != 1 || resources[0].URI != "file:///vault/secret.txt" || resources[0].MimeType != "text/plain" {
				t.Fatalf("resources %+v %v", resources, err)
			}
			templates, err := c.ListResourceTemplates(ctx)
			if err != nil || len(templates) != 0 {
				t.Fatalf("templates %+v %v", templates, err)
			}
		})
	}
}

// Resume starts a call from a recorded round: the retry is replayed in one
// request, and a state from another key is refused in round 1.
func TestResume(t *testing.T) {
	ctx := testContext(t)
	srv := newServer(t, sharedKey)
	c := newClient(t, mcptest.Handler(srv), &mcptest.Options{Elicitation: user})
	first, err := c.CallTool(ctx, "ask_two", nil)
	if err != nil {
		t.Fatal(err)
	}
	r2 := first.Exchange.Rounds[1]
	replay, err := c.CallTool(ctx, "ask_two", nil, mcptest.Resume(r2.RequestState, r2.InputResponses))
	if err != nil || replay.Text() != "Alice likes green" || len(replay.Exchange.Rounds) != 1 {
		t.Fatalf("replay: %v %+v", err, replay)
	}
	// From round 1's state the call goes on to ask the second question.
	r1 := first.Exchange.Rounds[0]
	again, err := c.CallTool(ctx, "ask_two", nil, mcptest.Resume(r1.RequestState, r1.InputResponses))
	if err != nil || len(again.Exchange.Rounds) != 2 || again.Exchange.Rounds[0].InputRequests[0].Elicitation.Message != "Favourite colour?" {
		t.Fatalf("resume from round 1: %v %+v", err, again)
	}
	other := mrtr.Key{ID: "other", Secret: []byte("another-secret-another-secret-0123456789")}
	foreign := newClient(t, mcptest.Handler(newServer(t, other)), &mcptest.Options{Elicitation: user})
	_, err = foreign.CallTool(ctx, "ask_two", nil, mcptest.Resume(r2.RequestState, r2.InputResponses))
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Round != 1 {
		t.Fatalf("foreign state: %v", err)
	}
	// Do takes Resume too, unless params carry their own members.
	resp, err := c.Do(ctx, "tools/call", map[string]any{"name": "ask_two"}, mcptest.Resume(r2.RequestState, r2.InputResponses))
	if err != nil || resp.ResultType() != "complete" {
		t.Fatalf("Do with Resume: %v %+v", err, resp)
	}
	if _, err := c.CallTool(ctx, "ask_two", nil, mcptest.Resume("s", []int{1})); err == nil {
		t.Fatal("Resume with answers that are not an object was accepted")
	}
}
