package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

const elicitCaps = `{"elicitation":{}}`

var transferSchema = json.RawMessage(`{"type":"object","properties":{"amount":{"type":"integer"},"to":{"type":"string"}},"required":["amount","to"]}`)

// mrtrFixture is a server with tools, a prompt and a resource that ask for
// confirmation, counting how often each handler runs.
type mrtrFixture struct {
	s        *Server
	logs     *syncBuffer // the server's log, debug level included
	calls    atomic.Int32
	mu       sync.Mutex
	question string // the message of the "changing" tool's form
}

func (f *mrtrFixture) ran() int { return int(f.calls.Swap(0)) }

func newMRTRFixture(t *testing.T) *mrtrFixture {
	t.Helper()
	logs := &syncBuffer{}
	f := &mrtrFixture{s: newTestServer(t, &Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}), logs: logs, question: "Pay 10?"}
	form := confirmForm(t, "Confirm the transfer?")
	transfer := func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		f.calls.Add(1)
		var a struct {
			Amount int    `json:"amount"`
			To     string `json:"to"`
		}
		if err := req.Bind(&a); err != nil {
			return nil, err
		}
		res, err := req.Elicit(ctx, form, WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		var c struct {
			OK bool `json:"ok"`
		}
		if res.Action != elicit.ActionAccept {
			return ErrorResult("transfer " + string(res.Action)), nil
		}
		if err := res.Decode(&c); err != nil {
			return nil, err
		}
		return TextResult(fmt.Sprintf("sent %d to %s: %v", a.Amount, a.To, c.OK)), nil
	}
	mustAddTool(t, f.s, Tool{Name: "transfer", InputSchema: transferSchema}, transfer)
	mustAddTool(t, f.s, Tool{Name: "transfer2", InputSchema: transferSchema}, transfer)
	mustAddTool(t, f.s, Tool{Name: "transfer_free", InputSchema: transferSchema}, transfer, AnswersWithoutState())

	capital := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("Capital of France?")}, MaxTokens: 10}
	mustAddTool(t, f.s, Tool{Name: "sampler"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		f.calls.Add(1)
		res, err := req.CreateMessage(ctx, capital, WithKey("capital"))
		if err != nil {
			return nil, err
		}
		return TextResult("model says " + res.Text()), nil
	})
	mustAddTool(t, f.s, Tool{Name: "roots"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		f.calls.Add(1)
		res, err := req.ListRoots(ctx, WithKey("roots"))
		if err != nil {
			return nil, err
		}
		return TextResult(fmt.Sprintf("%d roots", len(res.Roots))), nil
	})
	mustAddTool(t, f.s, Tool{Name: "lazy"}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		f.calls.Add(1)
		return nil, fmt.Errorf("not now: %w", mrtr.ErrInputRequired)
	})
	mustAddTool(t, f.s, Tool{Name: "shed"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		f.calls.Add(1)
		var st struct{ N int }
		ok, err := req.LoadState(&st)
		if err != nil {
			return nil, err
		}
		if !ok {
			if err := req.SaveState(struct{ N int }{41}); err != nil {
				return nil, err
			}
			return nil, req.Suspend()
		}
		return TextResult(fmt.Sprint(st.N + 1)), nil
	})
	mustAddTool(t, f.s, Tool{Name: "changing"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		f.calls.Add(1)
		f.mu.Lock()
		q := f.question
		f.mu.Unlock()
		res, err := req.Elicit(ctx, confirmForm(t, q), WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		return TextResult("answered " + string(res.Action)), nil
	})
	if err := f.s.AddPrompt(Prompt{Name: "survey", Arguments: []PromptArgument{{Name: "topic", Required: true}}}, func(ctx context.Context, req *PromptRequest) (*PromptResult, error) {
		f.calls.Add(1)
		res, err := req.Elicit(ctx, form, WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		return &PromptResult{Description: "survey", Messages: []PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("topic " + req.Arguments["topic"] + " " + string(res.Action))}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.AddResource(Resource{URI: "secret://doc", Name: "doc"}, func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		f.calls.Add(1)
		res, err := req.Elicit(ctx, form, WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(req.URI, "text/plain", "secret "+string(res.Action))}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

// transferArgs are the arguments every transfer call sends unless a test
// says otherwise.
var transferArgs = map[string]any{"amount": 10, "to": "bob"}

// sendTransfer sends one tools/call of transfer from c, with args (or
// transferArgs when nil).
func sendTransfer(t *testing.T, c *mcptest.Client, args any, opts ...mcptest.CallOption) *mcptest.Response {
	t.Helper()
	if args == nil {
		args = transferArgs
	}
	return sendTool(t, c, "transfer", args, opts...)
}

func TestMRTRTwoRounds(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, elicitCaps)
	r1 := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
	var ask struct {
		Method string `json:"method"`
		Params struct {
			Mode            string          `json:"mode"`
			Message         string          `json:"message"`
			RequestedSchema json.RawMessage `json:"requestedSchema"`
		} `json:"params"`
	}
	if err := json.Unmarshal(r1.InputRequests["confirm"], &ask); err != nil {
		t.Fatal(err)
	}
	if ask.Method != "elicitation/create" || ask.Params.Mode != "form" || ask.Params.Message != "Confirm the transfer?" ||
		!strings.Contains(string(ask.Params.RequestedSchema), `"ok":{"type":"boolean"}`) {
		t.Errorf("input request = %s", r1.InputRequests["confirm"])
	}
	if f.ran() != 1 {
		t.Fatal("round 1 did not run the handler once")
	}

	res := completeResult(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{"confirm": accept(true)})))
	if text, isErr := toolText(t, res); text != "sent 10 to bob: true" || isErr {
		t.Errorf("result %q isError=%v", text, isErr)
	}
	if f.ran() != 1 {
		t.Error("round 2 did not run the handler once")
	}

	t.Run("decline is a normal outcome", func(t *testing.T) {
		res := completeResult(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{"confirm": map[string]any{"action": "decline"}})))
		if text, isErr := toolText(t, res); text != "transfer decline" || !isErr {
			t.Errorf("result %q isError=%v", text, isErr)
		}
	})
	t.Run("state is reusable until it expires", func(t *testing.T) {
		completeResult(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{"confirm": accept(false)})))
	})
	t.Run("arguments reordered and respaced still verify", func(t *testing.T) {
		r := sendTransfer(t, c, json.RawMessage("{ \"to\" :\"bob\",\n\t\"amount\": 10 }"), mcptest.Resume(r1.RequestState, map[string]any{"confirm": accept(true)}))
		if text, _ := toolText(t, completeResult(t, r)); text != "sent 10 to bob: true" {
			t.Errorf("result %q", text)
		}
	})
	t.Run("unknown extra answers are ignored", func(t *testing.T) {
		completeResult(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{"confirm": accept(true), "bonus": map[string]any{"anything": 1}})))
	})
	t.Run("the client drives both rounds", func(t *testing.T) {
		c := newClientOpts(t, mcptest.Handler(f.s), &mcptest.Options{Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			if mcptest.InputKey(ctx) != "confirm" || req.Message != "Confirm the transfer?" {
				return nil, fmt.Errorf("asked %q under %q", req.Message, mcptest.InputKey(ctx))
			}
			return mcptest.Accept(map[string]any{"ok": true})
		}})
		res, err := c.CallTool(testContext(t), "transfer", transferArgs)
		if err != nil || res.Text() != "sent 10 to bob: true" || res.IsError || len(res.Exchange.Rounds) != 2 {
			t.Fatalf("CallTool: %v %+v", err, res)
		}
	})
}

// refusedState asserts the retry that send sends is refused with -32602
// naming reason before the handler runs.
func refusedState(t *testing.T, f *mrtrFixture, reason string, send func() *mcptest.Response) {
	t.Helper()
	f.ran()
	e := wantError(t, send(), http.StatusBadRequest, -32602)
	if !strings.Contains(e.Message, "invalid requestState") || !strings.Contains(e.Message, reason) {
		t.Errorf("message %q does not name the reason %q", e.Message, reason)
	}
	if n := f.ran(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
}

// refusedBinding asserts the retry that send sends, whose state was issued
// for another request, is refused with -32602 and the one reason that
// tells nothing of what the state was issued for, while the server's
// debug log names detail.
func refusedBinding(t *testing.T, f *mrtrFixture, detail string, send func() *mcptest.Response) {
	t.Helper()
	f.ran()
	e := wantError(t, send(), http.StatusBadRequest, -32602)
	const generic = "invalid requestState: it was not issued for this request (its method, target, arguments and principal must all match)"
	if e.Message != generic {
		t.Errorf("message %q, want %q", e.Message, generic)
	}
	if !strings.Contains(f.logs.String(), detail) {
		t.Errorf("the debug log does not name %q:\n%s", detail, f.logs.String())
	}
	if n := f.ran(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
}

// syncBuffer is a bytes.Buffer for a logger that several goroutines
// write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func TestMRTRStateRefused(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, elicitCaps)
	r1 := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
	answer := map[string]any{"confirm": accept(true)}
	// retry sends transfer with args (transferArgs when nil) presenting
	// state and the answer.
	retry := func(args any, state string) func() *mcptest.Response {
		return func() *mcptest.Response { return sendTransfer(t, c, args, mcptest.Resume(state, answer)) }
	}
	d, err := seal.ArgumentsDigest(json.RawMessage(`{"amount":10,"to":"bob"}`))
	if err != nil {
		t.Fatal(err)
	}
	binding := seal.Binding{Method: "tools/call", Target: "transfer", Arguments: d}

	t.Run("tampered claims", func(t *testing.T) {
		parts := strings.Split(r1.RequestState, ".")
		if len(parts) != 4 {
			t.Fatalf("state is not a JWS and its ciphertext: %q", r1.RequestState)
		}
		claims, err := base64.RawURLEncoding.DecodeString(parts[1])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(claims, &m); err != nil {
			t.Fatal(err)
		}
		m["exp"] = m["exp"].(float64) + 3600
		parts[1] = base64.RawURLEncoding.EncodeToString(mustJSON(t, m))
		refusedState(t, f, "signature does not verify", retry(nil, strings.Join(parts, ".")))
	})
	t.Run("garbage", func(t *testing.T) {
		refusedState(t, f, "malformed", retry(nil, "not-a-token"))
	})
	t.Run("unsigned", func(t *testing.T) {
		parts := strings.Split(r1.RequestState, ".")
		none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1","typ":"JWT"}`))
		refusedState(t, f, "invalid requestState", retry(nil, none+"."+parts[1]+"."))
	})
	t.Run("another tool", func(t *testing.T) {
		refusedBinding(t, f, `issued for \"transfer\", not \"transfer2\"`, func() *mcptest.Response {
			return sendTool(t, c, "transfer2", transferArgs, mcptest.Resume(r1.RequestState, answer))
		})
	})
	t.Run("another method", func(t *testing.T) {
		p1 := wantInputRequired(t, send(t, c, "prompts/get", map[string]any{"name": "survey", "arguments": map[string]any{"topic": "x"}}), "confirm")
		refusedBinding(t, f, "issued for prompts/get, not tools/call", retry(nil, p1.RequestState))
	})
	t.Run("other arguments", func(t *testing.T) {
		refusedBinding(t, f, "different arguments", retry(map[string]any{"amount": 1000, "to": "bob"}, r1.RequestState))
	})
	t.Run("other argument added", func(t *testing.T) {
		refusedBinding(t, f, "different arguments", retry(map[string]any{"amount": 10, "to": "bob", "memo": "x"}, r1.RequestState))
	})
	// The state is verified before the arguments are canonicalised: a
	// state that does not verify, or was issued for another call, is
	// refused for that, whatever the arguments.
	dup := json.RawMessage(`{"amount":10,"to":"bob","to":"mallory"}`)
	t.Run("garbage, with arguments that have no canonical form", func(t *testing.T) {
		refusedState(t, f, "malformed", retry(dup, "not-a-token"))
	})
	t.Run("another tool, with arguments that have no canonical form", func(t *testing.T) {
		refusedBinding(t, f, `issued for \"transfer\", not \"transfer2\"`, func() *mcptest.Response {
			return sendTool(t, c, "transfer2", dup, mcptest.Resume(r1.RequestState, answer))
		})
	})
	t.Run("a valid state, with arguments that have no canonical form", func(t *testing.T) {
		e := wantError(t, retry(dup, r1.RequestState)(), http.StatusBadRequest, -32602)
		if !strings.Contains(e.Message, "duplicate key") {
			t.Errorf("message %q", e.Message)
		}
		if n := f.ran(); n != 0 {
			t.Errorf("the handler ran %d times", n)
		}
	})
	t.Run("expired", func(t *testing.T) {
		past, err := seal.NewSealer(testRing(t), seal.SealerOptions{Now: func() time.Time { return time.Now().Add(-time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := past.Seal(&seal.State{Binding: binding})
		if err != nil {
			t.Fatal(err)
		}
		refusedState(t, f, "expired", retry(nil, tok))

		// The same forgery with a current clock verifies: only the expiry
		// made the difference. It issued no questions, so the answer is
		// ignored and the question is asked again.
		now, err := seal.NewSealer(testRing(t), seal.SealerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tok, err = now.Seal(&seal.State{Binding: binding}); err != nil {
			t.Fatal(err)
		}
		wantInputRequired(t, retry(nil, tok)(), "confirm")
	})
	t.Run("short StateTTL", func(t *testing.T) {
		s := newTestServer(t, &Options{StateTTL: time.Minute})
		if s.sealer.TTL() != time.Minute {
			t.Errorf("Sealer TTL = %v", s.sealer.TTL())
		}
	})
	t.Run("unknown key", func(t *testing.T) {
		ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k2", Secret: []byte("another-secret-0123456789abcdefghij")})
		if err != nil {
			t.Fatal(err)
		}
		other, err := seal.NewSealer(ring, seal.SealerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := other.Seal(&seal.State{Binding: binding})
		if err != nil {
			t.Fatal(err)
		}
		refusedState(t, f, `unknown key id "k2"`, retry(nil, tok))
	})
	t.Run("same kid, other secret", func(t *testing.T) {
		ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte("not-the-right-secret-0123456789abc")})
		if err != nil {
			t.Fatal(err)
		}
		other, err := seal.NewSealer(ring, seal.SealerOptions{})
		if err != nil {
			t.Fatal(err)
		}
		tok, err := other.Seal(&seal.State{Binding: binding})
		if err != nil {
			t.Fatal(err)
		}
		refusedState(t, f, "signature does not verify", retry(nil, tok))
	})
	t.Run("key rotation keeps old state valid", func(t *testing.T) {
		ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k0", Secret: []byte("the-new-secret-0123456789abcdefghij")}, testKey)
		if err != nil {
			t.Fatal(err)
		}
		s := newTestServer(t, nil)
		mustAddTool(t, s, Tool{Name: "transfer", InputSchema: transferSchema}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			if _, err := req.Elicit(ctx, confirmForm(t, "Confirm the transfer?"), WithKey("confirm")); err != nil {
				return nil, err
			}
			return TextResult("done"), nil
		})
		c := newClient(t, s, elicitCaps)
		old := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
		if err := s.SetStateKeys(ring); err != nil {
			t.Fatal(err)
		}
		completeResult(t, sendTransfer(t, c, nil, mcptest.Resume(old.RequestState, answer)))
		fresh := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
		header, _ := base64.RawURLEncoding.DecodeString(strings.Split(fresh.RequestState, ".")[0])
		if !strings.Contains(string(header), `"kid":"k0"`) {
			t.Errorf("new state not signed by the new key: %s", header)
		}
	})
}

func TestMRTRPrincipal(t *testing.T) {
	f := newMRTRFixture(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if u := r.Header.Get("X-User"); u != "" {
			ctx = ContextWithPrincipal(ctx, u)
		}
		f.s.ServeHTTP(w, r.WithContext(ctx))
	})
	c := newClient(t, h, elicitCaps)
	answer := map[string]any{"confirm": accept(true)}
	// as sends transfer as user ("" for none), presenting state.
	as := func(user, state string) func() *mcptest.Response {
		return func() *mcptest.Response {
			opts := []mcptest.CallOption{}
			if user != "" {
				opts = append(opts, mcptest.WithHeader("X-User", user))
			}
			if state != "" {
				opts = append(opts, mcptest.Resume(state, answer))
			}
			return sendTransfer(t, c, nil, opts...)
		}
	}
	r1 := wantInputRequired(t, as("alice", "")(), "confirm")

	refusedBinding(t, f, `issued to principal \"alice\", not \"mallory\"`, as("mallory", r1.RequestState))
	refusedBinding(t, f, `issued to principal \"alice\", not \"\"`, as("", r1.RequestState))
	completeResult(t, as("alice", r1.RequestState)())

	anon := wantInputRequired(t, as("", "")(), "confirm")
	refusedBinding(t, f, `issued to principal \"\", not \"alice\"`, as("alice", anon.RequestState))
}

func TestMRTRAnswers(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, elicitCaps)
	r1 := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
	f.ran()

	t.Run("answer to a key never issued", func(t *testing.T) {
		wantInputRequired(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{"other": accept(true)})), "confirm")
		if f.ran() != 1 {
			t.Error("handler did not run")
		}
	})
	t.Run("missing answer", func(t *testing.T) {
		r := wantInputRequired(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, nil)), "confirm")
		if r.RequestState == r1.RequestState {
			t.Error("the fresh input_required repeats the old state")
		}
		wantInputRequired(t, sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{})), "confirm")
	})
	// These inputResponses are malformed on purpose: Do sends params'
	// own members as given.
	for _, tt := range []struct {
		name      string
		responses string
		message   string
	}{
		{"inputResponses null", `null`, "inputResponses"},
		{"inputResponses array", `[]`, "inputResponses"},
		{"inputResponses string", `"yes"`, "inputResponses"},
		{"answer is a number", `{"confirm":5}`, `input response "confirm"`},
		{"answer without action", `{"confirm":{"content":{"ok":true}}}`, `input response "confirm"`},
		{"answer with an unknown action", `{"confirm":{"action":"maybe"}}`, `input response "confirm"`},
		{"content failing the schema", `{"confirm":{"action":"accept","content":{"ok":"yes"}}}`, `input response "confirm"`},
		{"required field missing", `{"confirm":{"action":"accept","content":{}}}`, `input response "confirm"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, c, "tools/call", map[string]any{"name": "transfer", "arguments": transferArgs, "inputResponses": json.RawMessage(tt.responses)},
				mcptest.Resume(r1.RequestState, nil))
			e := wantError(t, r, http.StatusBadRequest, -32602)
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
		})
	}
	t.Run("requestState of the wrong type", func(t *testing.T) {
		r := send(t, c, "tools/call", map[string]any{"name": "transfer", "arguments": transferArgs, "requestState": 7})
		wantError(t, r, http.StatusBadRequest, -32602)
	})
	t.Run("question changed since it was issued", func(t *testing.T) {
		r := wantInputRequired(t, sendTool(t, c, "changing", nil), "confirm")
		f.mu.Lock()
		f.question = "Pay 1000?"
		f.mu.Unlock()
		r2 := wantInputRequired(t, sendTool(t, c, "changing", nil, mcptest.Resume(r.RequestState, map[string]any{"confirm": accept(true)})), "confirm")
		if !strings.Contains(string(r2.InputRequests["confirm"]), "Pay 1000?") {
			t.Errorf("input request = %s", r2.InputRequests["confirm"])
		}
		res := completeResult(t, sendTool(t, c, "changing", nil, mcptest.Resume(r2.RequestState, map[string]any{"confirm": accept(true)})))
		if text, _ := toolText(t, res); text != "answered accept" {
			t.Errorf("result %q", text)
		}
	})
}

func TestMRTRAnswersWithoutState(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, elicitCaps)
	answer := map[string]any{"confirm": accept(true)}
	// Off (the default): the answer is ignored and the question asked again.
	wantInputRequired(t, sendTransfer(t, c, nil, mcptest.Resume("", answer)), "confirm")
	// On: matched by key.
	res := completeResult(t, sendTool(t, c, "transfer_free", map[string]any{"amount": 1, "to": "x"}, mcptest.Resume("", answer)))
	if text, _ := toolText(t, res); text != "sent 1 to x: true" {
		t.Errorf("result %q", text)
	}
	// On, but a state is present: the state still rules.
	r1 := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
	refusedBinding(t, f, `issued for \"transfer\"`, func() *mcptest.Response {
		return sendTool(t, c, "transfer_free", transferArgs, mcptest.Resume(r1.RequestState, answer))
	})
}

func TestMRTRCapabilities(t *testing.T) {
	f := newMRTRFixture(t)
	for _, tt := range []struct {
		name, tool, caps, want string
	}{
		{"sampling", "sampler", `{"elicitation":{}}`, `{"requiredCapabilities":{"sampling":{}}}`},
		{"elicitation", "transfer", `{"sampling":{}}`, `{"requiredCapabilities":{"elicitation":{}}}`},
		{"form elicitation with only url declared", "transfer", `{"elicitation":{"url":{}}}`, `{"requiredCapabilities":{"elicitation":{}}}`},
		{"roots", "roots", "", `{"requiredCapabilities":{"roots":{}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var args any
			if tt.tool == "transfer" {
				args = transferArgs
			}
			e := wantError(t, sendTool(t, newClient(t, f.s, tt.caps), tt.tool, args), http.StatusBadRequest, -32021)
			if string(e.Data) != tt.want {
				t.Errorf("data = %s, want %s", e.Data, tt.want)
			}
		})
	}
	t.Run("declared", func(t *testing.T) {
		sc := newClient(t, f.s, `{"sampling":{}}`)
		r := wantInputRequired(t, sendTool(t, sc, "sampler", nil), "capital")
		if !strings.Contains(string(r.InputRequests["capital"]), `"method":"sampling/createMessage"`) {
			t.Errorf("input request = %s", r.InputRequests["capital"])
		}
		answer := map[string]any{"capital": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"}}
		res := completeResult(t, sendTool(t, sc, "sampler", nil, mcptest.Resume(r.RequestState, answer)))
		if text, _ := toolText(t, res); text != "model says Paris" {
			t.Errorf("result %q", text)
		}
		rc := newClient(t, f.s, `{"roots":{}}`)
		r = wantInputRequired(t, sendTool(t, rc, "roots", nil), "roots")
		if string(r.InputRequests["roots"]) != `{"method":"roots/list","params":{}}` {
			t.Errorf("input request = %s", r.InputRequests["roots"])
		}
		res = completeResult(t, sendTool(t, rc, "roots", nil, mcptest.Resume(r.RequestState, map[string]any{"roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///p"}}}})))
		if text, _ := toolText(t, res); text != "1 roots" {
			t.Errorf("result %q", text)
		}
	})
	t.Run("the client drives sampling and roots", func(t *testing.T) {
		c := newClientOpts(t, mcptest.Handler(f.s), &mcptest.Options{
			Sampling: func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Content: []mcp.Block{mcp.Text("Paris")}, Model: "m"}, nil
			},
			Roots: func(ctx context.Context) (*mcp.ListRootsResult, error) {
				return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///p"}}}, nil
			},
		})
		for tool, want := range map[string]string{"sampler": "model says Paris", "roots": "1 roots"} {
			res, err := c.CallTool(testContext(t), tool, nil)
			if err != nil || res.Text() != want || res.IsError {
				t.Errorf("%s: %v %+v, want %q", tool, err, res, want)
			}
		}
	})
}

func TestMRTRPromptAndResource(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, elicitCaps)
	answer := map[string]any{"confirm": accept(true)}

	t.Run("prompts/get", func(t *testing.T) {
		get := func(topic any, opts ...mcptest.CallOption) *mcptest.Response {
			return send(t, c, "prompts/get", map[string]any{"name": "survey", "arguments": map[string]any{"topic": topic}}, opts...)
		}
		r1 := wantInputRequired(t, get("go"), "confirm")
		res := completeResult(t, get("go", mcptest.Resume(r1.RequestState, answer)))
		msgs, _ := res["messages"].([]any)
		if len(msgs) != 1 || !jsonEqual(msgs[0], map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "topic go accept"}}) {
			t.Errorf("messages = %v", res["messages"])
		}
		if res["description"] != "survey" {
			t.Errorf("description = %v", res["description"])
		}
		refusedBinding(t, f, "different arguments", func() *mcptest.Response { return get("rust", mcptest.Resume(r1.RequestState, answer)) })
		wantError(t, send(t, c, "prompts/get", map[string]any{"name": "survey"}), http.StatusBadRequest, -32602)
		wantError(t, get(1), http.StatusBadRequest, -32602)
		wantError(t, send(t, newClient(t, f.s, ""), "prompts/get", map[string]any{"name": "nope"}), http.StatusBadRequest, -32602)

		pc := newClientOpts(t, mcptest.Handler(f.s), &mcptest.Options{Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
			return mcptest.Decline()
		}})
		pr, err := pc.GetPrompt(testContext(t), "survey", map[string]string{"topic": "go"})
		if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.Text != "topic go decline" {
			t.Errorf("GetPrompt: %v %+v", err, pr)
		}
	})
	t.Run("resources/read", func(t *testing.T) {
		read := func(c *mcptest.Client, opts ...mcptest.CallOption) *mcptest.Response {
			return send(t, c, "resources/read", map[string]any{"uri": "secret://doc"}, opts...)
		}
		r1 := wantInputRequired(t, read(c), "confirm")
		res := completeResult(t, read(c, mcptest.Resume(r1.RequestState, answer)))
		wantCache(t, res, 0, "public")
		if c := res["contents"].([]any)[0].(map[string]any); c["text"] != "secret accept" {
			t.Errorf("contents = %v", c)
		}
		wantError(t, read(newClient(t, f.s, `{}`)), http.StatusBadRequest, -32021)
	})
}

func TestMRTRHandlerMistakes(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, "")
	t.Run("ErrInputRequired without asking", func(t *testing.T) {
		e := wantError(t, sendTool(t, c, "lazy", nil), http.StatusOK, -32603)
		if !strings.Contains(e.Message, "without asking") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("Suspend with state only", func(t *testing.T) {
		r := wantInputRequired(t, sendTool(t, c, "shed", nil))
		if r.InputRequests != nil {
			t.Errorf("inputRequests = %v, want absent", r.InputRequests)
		}
		res := completeResult(t, sendTool(t, c, "shed", nil, mcptest.Resume(r.RequestState, nil)))
		if text, _ := toolText(t, res); text != "42" {
			t.Errorf("result %q", text)
		}
		// The client retries a state-only result by itself.
		tr, err := c.CallTool(testContext(t), "shed", nil)
		if err != nil || tr.Text() != "42" || len(tr.Exchange.Rounds) != 2 {
			t.Errorf("CallTool: %v %+v", err, tr)
		}
	})
}
