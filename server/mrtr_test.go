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

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/content"
	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/seal"
	"github.com/baton-mcp/baton/mrtr"
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

	capital := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("Capital of France?")}, MaxTokens: 10}
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
		return &PromptResult{Description: "survey", Messages: []PromptMessage{{Role: content.RoleUser, Content: content.Text("topic " + req.Arguments["topic"] + " " + string(res.Action))}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.AddResource(Resource{URI: "secret://doc", Name: "doc"}, func(ctx context.Context, req *ResourceRequest) (*ResourceResult, error) {
		f.calls.Add(1)
		res, err := req.Elicit(ctx, form, WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		return &ResourceResult{Contents: []content.ResourceContents{content.TextContents(req.URI, "text/plain", "secret "+string(res.Action))}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	return f
}

func transferCall(id any, args any) *rpc {
	if args == nil {
		args = map[string]any{"amount": 10, "to": "bob"}
	}
	return toolCall(id, "transfer", args).caps(elicitCaps)
}

func TestMRTRTwoRounds(t *testing.T) {
	f := newMRTRFixture(t)
	r1 := wantInputRequired(t, do(t, f.s, transferCall(1, nil)), "1", "confirm")
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

	res := completeResult(t, do(t, f.s, transferCall(2, nil).retry(r1.RequestState, map[string]any{"confirm": accept(true)})), "2")
	if text, isErr := toolText(t, res); text != "sent 10 to bob: true" || isErr {
		t.Errorf("result %q isError=%v", text, isErr)
	}
	if f.ran() != 1 {
		t.Error("round 2 did not run the handler once")
	}

	t.Run("decline is a normal outcome", func(t *testing.T) {
		res := completeResult(t, do(t, f.s, transferCall(3, nil).retry(r1.RequestState, map[string]any{"confirm": map[string]any{"action": "decline"}})), "3")
		if text, isErr := toolText(t, res); text != "transfer decline" || !isErr {
			t.Errorf("result %q isError=%v", text, isErr)
		}
	})
	t.Run("state is reusable until it expires", func(t *testing.T) {
		completeResult(t, do(t, f.s, transferCall(4, nil).retry(r1.RequestState, map[string]any{"confirm": accept(false)})), "4")
	})
	t.Run("arguments reordered and respaced still verify", func(t *testing.T) {
		req := transferCall(5, json.RawMessage("{ \"to\" :\"bob\",\n\t\"amount\": 10 }")).retry(r1.RequestState, map[string]any{"confirm": accept(true)})
		res := completeResult(t, do(t, f.s, req), "5")
		if text, _ := toolText(t, res); text != "sent 10 to bob: true" {
			t.Errorf("result %q", text)
		}
	})
	t.Run("unknown extra answers are ignored", func(t *testing.T) {
		req := transferCall(6, nil).retry(r1.RequestState, map[string]any{"confirm": accept(true), "bonus": map[string]any{"anything": 1}})
		completeResult(t, do(t, f.s, req), "6")
	})
}

// refusedState asserts a retry is refused with -32602 naming reason before
// the handler runs.
func refusedState(t *testing.T, f *mrtrFixture, h http.Handler, req *rpc, reason string) {
	t.Helper()
	f.ran()
	e := wantError(t, do(t, h, req), http.StatusBadRequest, -32602, string(mustJSON(t, req.id)))
	if !strings.Contains(e.Message, "invalid requestState") || !strings.Contains(e.Message, reason) {
		t.Errorf("message %q does not name the reason %q", e.Message, reason)
	}
	if n := f.ran(); n != 0 {
		t.Errorf("the handler ran %d times", n)
	}
}

// refusedBinding asserts a retry whose state was issued for another
// request is refused with -32602 and the one reason that tells nothing of
// what the state was issued for, while the server's debug log names
// detail.
func refusedBinding(t *testing.T, f *mrtrFixture, h http.Handler, req *rpc, detail string) {
	t.Helper()
	f.ran()
	e := wantError(t, do(t, h, req), http.StatusBadRequest, -32602, string(mustJSON(t, req.id)))
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
	r1 := wantInputRequired(t, do(t, f.s, transferCall(1, nil)), "1", "confirm")
	answer := map[string]any{"confirm": accept(true)}
	d, err := seal.ArgumentsDigest(json.RawMessage(`{"amount":10,"to":"bob"}`))
	if err != nil {
		t.Fatal(err)
	}
	binding := seal.Binding{Method: "tools/call", Target: "transfer", Arguments: d}

	t.Run("tampered claims", func(t *testing.T) {
		parts := strings.Split(r1.RequestState, ".")
		if len(parts) != 3 {
			t.Fatalf("state is not a JWS: %q", r1.RequestState)
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
		refusedState(t, f, f.s, transferCall(2, nil).retry(strings.Join(parts, "."), answer), "signature does not verify")
	})
	t.Run("garbage", func(t *testing.T) {
		refusedState(t, f, f.s, transferCall(2, nil).retry("not-a-token", answer), "malformed")
	})
	t.Run("unsigned", func(t *testing.T) {
		parts := strings.Split(r1.RequestState, ".")
		none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1","typ":"JWT"}`))
		refusedState(t, f, f.s, transferCall(2, nil).retry(none+"."+parts[1]+".", answer), "invalid requestState")
	})
	t.Run("another tool", func(t *testing.T) {
		req := toolCall(2, "transfer2", map[string]any{"amount": 10, "to": "bob"}).caps(elicitCaps).retry(r1.RequestState, answer)
		refusedBinding(t, f, f.s, req, `issued for \"transfer\", not \"transfer2\"`)
	})
	t.Run("another method", func(t *testing.T) {
		p1 := wantInputRequired(t, do(t, f.s, call(1, "prompts/get", map[string]any{"name": "survey", "arguments": map[string]any{"topic": "x"}}).caps(elicitCaps)), "1", "confirm")
		req := toolCall(2, "transfer", map[string]any{"amount": 10, "to": "bob"}).caps(elicitCaps).retry(p1.RequestState, answer)
		refusedBinding(t, f, f.s, req, "issued for prompts/get, not tools/call")
	})
	t.Run("other arguments", func(t *testing.T) {
		req := transferCall(2, map[string]any{"amount": 1000, "to": "bob"}).retry(r1.RequestState, answer)
		refusedBinding(t, f, f.s, req, "different arguments")
	})
	t.Run("other argument added", func(t *testing.T) {
		req := transferCall(2, map[string]any{"amount": 10, "to": "bob", "memo": "x"}).retry(r1.RequestState, answer)
		refusedBinding(t, f, f.s, req, "different arguments")
	})
	// The state is verified before the arguments are canonicalised: a
	// state that does not verify, or was issued for another call, is
	// refused for that, whatever the arguments.
	dup := json.RawMessage(`{"amount":10,"to":"bob","to":"mallory"}`)
	t.Run("garbage, with arguments that have no canonical form", func(t *testing.T) {
		refusedState(t, f, f.s, transferCall(2, dup).retry("not-a-token", answer), "malformed")
	})
	t.Run("another tool, with arguments that have no canonical form", func(t *testing.T) {
		req := toolCall(2, "transfer2", dup).caps(elicitCaps).retry(r1.RequestState, answer)
		refusedBinding(t, f, f.s, req, `issued for \"transfer\", not \"transfer2\"`)
	})
	t.Run("a valid state, with arguments that have no canonical form", func(t *testing.T) {
		e := wantError(t, do(t, f.s, transferCall(2, dup).retry(r1.RequestState, answer)), http.StatusBadRequest, -32602, "2")
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
		refusedState(t, f, f.s, transferCall(2, nil).retry(tok, answer), "expired")

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
		wantInputRequired(t, do(t, f.s, transferCall(3, nil).retry(tok, answer)), "3", "confirm")
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
		refusedState(t, f, f.s, transferCall(2, nil).retry(tok, answer), `unknown key id "k2"`)
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
		refusedState(t, f, f.s, transferCall(2, nil).retry(tok, answer), "signature does not verify")
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
		old := wantInputRequired(t, do(t, s, transferCall(1, nil)), "1", "confirm")
		if err := s.SetStateKeys(ring); err != nil {
			t.Fatal(err)
		}
		completeResult(t, do(t, s, transferCall(2, nil).retry(old.RequestState, answer)), "2")
		fresh := wantInputRequired(t, do(t, s, transferCall(3, nil)), "3", "confirm")
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
			ctx = mrtr.ContextWithPrincipal(ctx, u)
		}
		f.s.ServeHTTP(w, r.WithContext(ctx))
	})
	answer := map[string]any{"confirm": accept(true)}
	r1 := wantInputRequired(t, do(t, h, transferCall(1, nil).header("X-User", "alice")), "1", "confirm")

	refusedBinding(t, f, h, transferCall(2, nil).header("X-User", "mallory").retry(r1.RequestState, answer), `issued to principal \"alice\", not \"mallory\"`)
	refusedBinding(t, f, h, transferCall(3, nil).retry(r1.RequestState, answer), `issued to principal \"alice\", not \"\"`)
	completeResult(t, do(t, h, transferCall(4, nil).header("X-User", "alice").retry(r1.RequestState, answer)), "4")

	anon := wantInputRequired(t, do(t, h, transferCall(5, nil)), "5", "confirm")
	refusedBinding(t, f, h, transferCall(6, nil).header("X-User", "alice").retry(anon.RequestState, answer), `issued to principal \"\", not \"alice\"`)
}

func TestMRTRAnswers(t *testing.T) {
	f := newMRTRFixture(t)
	r1 := wantInputRequired(t, do(t, f.s, transferCall(1, nil)), "1", "confirm")
	f.ran()

	t.Run("answer to a key never issued", func(t *testing.T) {
		wantInputRequired(t, do(t, f.s, transferCall(2, nil).retry(r1.RequestState, map[string]any{"other": accept(true)})), "2", "confirm")
		if f.ran() != 1 {
			t.Error("handler did not run")
		}
	})
	t.Run("missing answer", func(t *testing.T) {
		r := wantInputRequired(t, do(t, f.s, transferCall(3, nil).retry(r1.RequestState, nil)), "3", "confirm")
		if r.RequestState == r1.RequestState {
			t.Error("the fresh input_required repeats the old state")
		}
		wantInputRequired(t, do(t, f.s, transferCall(3, nil).retry(r1.RequestState, map[string]any{})), "3", "confirm")
	})
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
			req := transferCall(4, nil).retry(r1.RequestState, nil).withParam("inputResponses", json.RawMessage(tt.responses))
			e := wantError(t, do(t, f.s, req), http.StatusBadRequest, -32602, "4")
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
		})
	}
	t.Run("requestState of the wrong type", func(t *testing.T) {
		req := transferCall(5, nil).withParam("requestState", 7)
		wantError(t, do(t, f.s, req), http.StatusBadRequest, -32602, "5")
	})
	t.Run("question changed since it was issued", func(t *testing.T) {
		r := wantInputRequired(t, do(t, f.s, toolCall(6, "changing", nil).caps(elicitCaps)), "6", "confirm")
		f.mu.Lock()
		f.question = "Pay 1000?"
		f.mu.Unlock()
		r2 := wantInputRequired(t, do(t, f.s, toolCall(7, "changing", nil).caps(elicitCaps).retry(r.RequestState, map[string]any{"confirm": accept(true)})), "7", "confirm")
		if !strings.Contains(string(r2.InputRequests["confirm"]), "Pay 1000?") {
			t.Errorf("input request = %s", r2.InputRequests["confirm"])
		}
		res := completeResult(t, do(t, f.s, toolCall(8, "changing", nil).caps(elicitCaps).retry(r2.RequestState, map[string]any{"confirm": accept(true)})), "8")
		if text, _ := toolText(t, res); text != "answered accept" {
			t.Errorf("result %q", text)
		}
	})
}

func TestMRTRAnswersWithoutState(t *testing.T) {
	f := newMRTRFixture(t)
	answer := map[string]any{"confirm": accept(true)}
	// Off (the default): the answer is ignored and the question asked again.
	wantInputRequired(t, do(t, f.s, transferCall(1, nil).retry("", answer)), "1", "confirm")
	// On: matched by key.
	res := completeResult(t, do(t, f.s, toolCall(2, "transfer_free", map[string]any{"amount": 1, "to": "x"}).caps(elicitCaps).retry("", answer)), "2")
	if text, _ := toolText(t, res); text != "sent 1 to x: true" {
		t.Errorf("result %q", text)
	}
	// On, but a state is present: the state still rules.
	r1 := wantInputRequired(t, do(t, f.s, transferCall(3, nil)), "3", "confirm")
	refusedBinding(t, f, f.s, toolCall(4, "transfer_free", map[string]any{"amount": 10, "to": "bob"}).caps(elicitCaps).retry(r1.RequestState, answer), `issued for \"transfer\"`)
}

func TestMRTRCapabilities(t *testing.T) {
	f := newMRTRFixture(t)
	for _, tt := range []struct {
		name string
		req  *rpc
		want string
	}{
		{"sampling", toolCall(1, "sampler", nil).caps(`{"elicitation":{}}`), `{"requiredCapabilities":{"sampling":{}}}`},
		{"elicitation", transferCall(1, nil).caps(`{"sampling":{}}`), `{"requiredCapabilities":{"elicitation":{}}}`},
		{"form elicitation with only url declared", transferCall(1, nil).caps(`{"elicitation":{"url":{}}}`), `{"requiredCapabilities":{"elicitation":{}}}`},
		{"roots", toolCall(1, "roots", nil), `{"requiredCapabilities":{"roots":{}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := wantError(t, do(t, f.s, tt.req), http.StatusBadRequest, -32021, "1")
			if string(e.Data) != tt.want {
				t.Errorf("data = %s, want %s", e.Data, tt.want)
			}
		})
	}
	t.Run("declared", func(t *testing.T) {
		r := wantInputRequired(t, do(t, f.s, toolCall(2, "sampler", nil).caps(`{"sampling":{}}`)), "2", "capital")
		if !strings.Contains(string(r.InputRequests["capital"]), `"method":"sampling/createMessage"`) {
			t.Errorf("input request = %s", r.InputRequests["capital"])
		}
		answer := map[string]any{"capital": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"}}
		res := completeResult(t, do(t, f.s, toolCall(3, "sampler", nil).caps(`{"sampling":{}}`).retry(r.RequestState, answer)), "3")
		if text, _ := toolText(t, res); text != "model says Paris" {
			t.Errorf("result %q", text)
		}
		r = wantInputRequired(t, do(t, f.s, toolCall(4, "roots", nil).caps(`{"roots":{}}`)), "4", "roots")
		if string(r.InputRequests["roots"]) != `{"method":"roots/list","params":{}}` {
			t.Errorf("input request = %s", r.InputRequests["roots"])
		}
		res = completeResult(t, do(t, f.s, toolCall(5, "roots", nil).caps(`{"roots":{}}`).retry(r.RequestState, map[string]any{"roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///p"}}}})), "5")
		if text, _ := toolText(t, res); text != "1 roots" {
			t.Errorf("result %q", text)
		}
	})
}

func TestMRTRPromptAndResource(t *testing.T) {
	f := newMRTRFixture(t)
	answer := map[string]any{"confirm": accept(true)}

	t.Run("prompts/get", func(t *testing.T) {
		get := func(id int, topic string) *rpc {
			return call(id, "prompts/get", map[string]any{"name": "survey", "arguments": map[string]any{"topic": topic}}).caps(elicitCaps)
		}
		r1 := wantInputRequired(t, do(t, f.s, get(1, "go")), "1", "confirm")
		res := completeResult(t, do(t, f.s, get(2, "go").retry(r1.RequestState, answer)), "2")
		msgs, _ := res["messages"].([]any)
		if len(msgs) != 1 || !jsonEqual(msgs[0], map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "topic go accept"}}) {
			t.Errorf("messages = %v", res["messages"])
		}
		if res["description"] != "survey" {
			t.Errorf("description = %v", res["description"])
		}
		refusedBinding(t, f, f.s, get(3, "rust").retry(r1.RequestState, answer), "different arguments")
		wantError(t, do(t, f.s, call(4, "prompts/get", map[string]any{"name": "survey"}).caps(elicitCaps)), http.StatusBadRequest, -32602, "4")
		wantError(t, do(t, f.s, call(4, "prompts/get", map[string]any{"name": "survey", "arguments": map[string]any{"topic": 1}}).caps(elicitCaps)), http.StatusBadRequest, -32602, "4")
		wantError(t, do(t, f.s, call(4, "prompts/get", map[string]any{"name": "nope"})), http.StatusBadRequest, -32602, "4")
	})
	t.Run("resources/read", func(t *testing.T) {
		read := func(id int) *rpc {
			return call(id, "resources/read", map[string]any{"uri": "secret://doc"}).caps(elicitCaps)
		}
		r1 := wantInputRequired(t, do(t, f.s, read(1)), "1", "confirm")
		res := completeResult(t, do(t, f.s, read(2).retry(r1.RequestState, answer)), "2")
		wantCache(t, res, 0, "public")
		if c := res["contents"].([]any)[0].(map[string]any); c["text"] != "secret accept" {
			t.Errorf("contents = %v", c)
		}
		wantError(t, do(t, f.s, read(3).caps(`{}`)), http.StatusBadRequest, -32021, "3")
	})
}

func TestMRTRHandlerMistakes(t *testing.T) {
	f := newMRTRFixture(t)
	t.Run("ErrInputRequired without asking", func(t *testing.T) {
		e := wantError(t, do(t, f.s, toolCall(1, "lazy", nil)), http.StatusOK, -32603, "1")
		if !strings.Contains(e.Message, "without asking") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("Suspend with state only", func(t *testing.T) {
		r := wantInputRequired(t, do(t, f.s, toolCall(2, "shed", nil)), "2")
		if r.InputRequests != nil {
			t.Errorf("inputRequests = %v, want absent", r.InputRequests)
		}
		res := completeResult(t, do(t, f.s, toolCall(3, "shed", nil).retry(r.RequestState, nil)), "3")
		if text, _ := toolText(t, res); text != "42" {
			t.Errorf("result %q", text)
		}
	})
}
