package round

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

var formCaps = mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}

func confirmForm(t testing.TB, message string) *elicit.Request {
	t.Helper()
	r, err := elicit.NewForm(message, elicit.Boolean("confirm").Required())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// roundTrip runs one handler round: it opens the state (if any) against b,
// runs ask, and when it asks for input seals the next state.
type roundTrip struct {
	t      *testing.T
	sealer *seal.Sealer
	b      seal.Binding
	opts   Options
}

func (rt roundTrip) round(caps mcp.ClientCapabilities, token string, answers string) *Round {
	rt.t.Helper()
	var st *seal.State
	if token != "" {
		var err error
		if st, err = openBound(rt.sealer, token, rt.b); err != nil {
			rt.t.Fatalf("open state: %v", err)
		}
	}
	var responses Responses
	if answers != "" {
		var err error
		if responses, err = ParseResponses(json.RawMessage(answers)); err != nil {
			rt.t.Fatal(err)
		}
	}
	return New(caps, responses, st, rt.opts)
}

func newRoundTrip(t *testing.T, opts Options) roundTrip {
	return roundTrip{t: t, sealer: testSealer(t, seal.SealerOptions{}), b: testBinding(t), opts: opts}
}

func TestElicitTwoRounds(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	form := confirmForm(t, "Transfer 25 to bob?")

	r1 := rt.round(formCaps, "", "")
	if r1.Resumed() {
		t.Fatal("round 1 has no state")
	}
	_, err := elicitQ(r1, "confirm", form)
	if !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("round 1: err = %v, want ErrInputRequired", err)
	}
	if err := r1.SaveState(map[string]int{"round": 1}); err != nil {
		t.Fatal(err)
	}
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	if len(irr.Questions) != 1 || irr.Questions[0].Key != "confirm" || irr.Questions[0].Request.Elicitation() != form {
		t.Fatalf("input requests = %+v", irr.Questions)
	}

	r2 := rt.round(formCaps, irr.RequestState, `{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	if !r2.Resumed() {
		t.Fatal("round 2 should resume a verified state")
	}
	var st map[string]int
	if ok, err := r2.LoadState(&st); !ok || err != nil || st["round"] != 1 {
		t.Fatalf("LoadState = %v, %v, %v", ok, err, st)
	}
	res, err := elicitQ(r2, "confirm", form)
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		Confirm bool `json:"confirm"`
	}
	if res.Action != elicit.ActionAccept || res.Decode(&ans) != nil || !ans.Confirm {
		t.Fatalf("answer = %+v", res)
	}
	if len(r2.Pending()) != 0 {
		t.Fatalf("nothing should be pending, got %v", r2.Pending())
	}
}

func TestDeclineAndCancelAreResults(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	form := confirmForm(t, "ok?")
	r1 := rt.round(formCaps, "", "")
	_, _ = elicitQ(r1, "c", form)
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []elicit.Action{elicit.ActionDecline, elicit.ActionCancel} {
		r2 := rt.round(formCaps, irr.RequestState, `{"c":{"action":"`+string(action)+`"}}`)
		res, err := elicitQ(r2, "c", form)
		if err != nil || res.Action != action {
			t.Fatalf("%s: res = %+v, err = %v", action, res, err)
		}
	}
}

func TestAnswersNobodyAskedForAreIgnored(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	form := confirmForm(t, "ok?")
	r1 := rt.round(formCaps, "", "")
	_, _ = elicitQ(r1, "confirm", form)
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	// The retry answers "confirm" and also "other", which was never issued.
	r2 := rt.round(formCaps, irr.RequestState, `{"confirm":{"action":"accept","content":{"confirm":true}},"other":{"action":"accept","content":{"confirm":true}}}`)
	if _, err := elicitQ(r2, "confirm", form); err != nil {
		t.Fatalf("issued key: %v", err)
	}
	if _, err := elicitQ(r2, "other", form); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("a key the state never issued must be asked, not answered: err = %v", err)
	}
}

func TestChangedQuestionIsAskedAgain(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	r1 := rt.round(formCaps, "", "")
	_, _ = elicitQ(r1, "confirm", confirmForm(t, "Transfer 25 to bob?"))
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r2 := rt.round(formCaps, irr.RequestState, `{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	if _, err := elicitQ(r2, "confirm", confirmForm(t, "Transfer 9000 to mallory?")); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("an answer to another question must not be handed over: err = %v", err)
	}
}

func TestMissingAnswerAsksAgain(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	form := confirmForm(t, "ok?")
	r1 := rt.round(formCaps, "", "")
	_, _ = elicitQ(r1, "confirm", form)
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r2 := rt.round(formCaps, irr.RequestState, `{}`)
	if _, err := elicitQ(r2, "confirm", form); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("err = %v, want ErrInputRequired", err)
	}
	irr2, err := r2.Suspended(rt.sealer, rt.b)
	if err != nil || irr2.RequestState == irr.RequestState || len(irr2.Questions) != 1 {
		t.Fatalf("a fresh input_required is expected: %+v, %v", irr2, err)
	}
}

func TestAnswersWithoutState(t *testing.T) {
	form := confirmForm(t, "ok?")
	answer := `{"confirm":{"action":"accept","content":{"confirm":true}}}`

	strict := newRoundTrip(t, Options{})
	if _, err := elicitQ(strict.round(formCaps, "", answer), "confirm", form); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("by default an answer without state is ignored: err = %v", err)
	}
	lenient := newRoundTrip(t, Options{AnswersWithoutState: true})
	r := lenient.round(formCaps, "", answer)
	if res, err := elicitQ(r, "confirm", form); err != nil || res.Action != elicit.ActionAccept {
		t.Fatalf("with AnswersWithoutState: %+v, %v", res, err)
	}
	if _, err := elicitQ(r, "unasked", form); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("only asked keys are answered: %v", err)
	}
}

func TestInvalidAnswers(t *testing.T) {
	rt := newRoundTrip(t, Options{AnswersWithoutState: true})
	form := confirmForm(t, "ok?")
	for _, tc := range []struct{ name, answers string }{
		{"number", `{"confirm":12345}`},
		{"null", `{"confirm":null}`},
		{"bad action", `{"confirm":{"action":"maybe"}}`},
		{"wrong type", `{"confirm":{"action":"accept","content":{"confirm":"yes"}}}`},
		{"missing required", `{"confirm":{"action":"accept","content":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := elicitQ(rt.round(formCaps, "", tc.answers), "confirm", form)
			var ire *InvalidResponseError
			if !errors.As(err, &ire) || ire.Key != "confirm" {
				t.Fatalf("err = %v, want *InvalidResponseError for confirm", err)
			}
			if rpc := ire.RPCError(); rpc.Code != -32602 || !strings.Contains(rpc.Message, `"confirm"`) {
				t.Fatalf("RPCError = %+v", rpc)
			}
		})
	}
	if _, err := ParseResponses(json.RawMessage(`null`)); err == nil {
		t.Fatal("inputResponses null must be an error")
	}
	if _, err := ParseResponses(json.RawMessage(`[1]`)); err == nil {
		t.Fatal("inputResponses array must be an error")
	}
	if m, err := ParseResponses(nil); err != nil || m.Len() != 0 {
		t.Fatalf("absent inputResponses: %v, %v", m, err)
	}
}

func TestCapabilitiesGateQuestions(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	urlReq, err := elicit.NewURL("Sign in", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	sample := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("hi")}, MaxTokens: 10}
	for _, tc := range []struct {
		name string
		caps mcp.ClientCapabilities
		ask  func(r *Round) error
		want string
	}{
		{"form without elicitation", mcp.ClientCapabilities{}, func(r *Round) error { _, err := elicitQ(r, "k", confirmForm(t, "x")); return err }, `"elicitation":{}`},
		{"url with form only", formCaps, func(r *Round) error { _, err := elicitQ(r, "k", urlReq); return err }, `"url":{}`},
		{"sampling", formCaps, func(r *Round) error { _, err := sampleQ(r, "k", sample); return err }, `"sampling":{}`},
		{"roots", formCaps, func(r *Round) error { _, err := rootsQ(r, "k"); return err }, `"roots":{}`},
		{"sampling tools", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, func(r *Round) error {
			p := *sample
			p.ToolChoice = &mcp.ToolChoice{Mode: "auto"}
			_, err := sampleQ(r, "k", &p)
			return err
		}, `"tools":{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rt.round(tc.caps, "", "")
			err := tc.ask(r)
			var mc *mcp.MissingCapabilityError
			if !errors.As(err, &mc) {
				t.Fatalf("err = %v, want *MissingCapabilityError", err)
			}
			rpc := mc.RPCError()
			data, _ := json.Marshal(rpc.Data)
			if rpc.Code != -32021 || !strings.Contains(string(data), tc.want) {
				t.Fatalf("RPCError = %d %s, want requiredCapabilities containing %s", rpc.Code, data, tc.want)
			}
			if len(r.Pending()) != 0 {
				t.Fatal("a question the client cannot answer must not be recorded")
			}
		})
	}
	// URL mode declared: allowed.
	r := rt.round(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &mcp.Empty{}}}, "", "")
	if _, err := elicitQ(r, "k", urlReq); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("url elicitation with url declared: %v", err)
	}
	// Declaring only url does not grant form.
	if _, err := elicitQ(r, "f", confirmForm(t, "x")); err == nil || errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("form elicitation with only url declared: %v", err)
	}
}

func TestSeveralQuestionsAtOnce(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	caps := mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}, Sampling: &mcp.SamplingCapability{}, Roots: &mcp.RootsCapability{}}
	sample := &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("Generate a greeting")}, MaxTokens: 50}
	form := confirmForm(t, "ok?")
	ask := func(r *Round) error {
		_, e1 := elicitQ(r, "user", form)
		_, e2 := sampleQ(r, "greeting", sample)
		_, e3 := rootsQ(r, "roots")
		return errors.Join(e1, e2, e3)
	}
	r1 := rt.round(caps, "", "")
	if err := ask(r1); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatal(err)
	}
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(irr.Questions)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"user":{"method":"elicitation/create","params":{"mode":"form","message":"ok?","requestedSchema":{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}}},` +
		`"greeting":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}},` +
		`"roots":{"method":"roots/list","params":{}}}`
	if string(b) != want {
		t.Fatalf("inputRequests =\n%s\nwant\n%s", b, want)
	}
	// Answer two of three: the third is asked again, the two come back.
	r2 := rt.round(caps, irr.RequestState, `{"user":{"action":"accept","content":{"confirm":true}},"roots":{"roots":[{"uri":"file:///p"}]}}`)
	err = ask(r2)
	if !errors.Is(err, mrtr.ErrInputRequired) || len(r2.Pending()) != 1 || r2.Pending()[0].Key != "greeting" {
		t.Fatalf("err = %v, pending = %v", err, r2.Pending())
	}
}

func TestRoundMisuse(t *testing.T) {
	rt := newRoundTrip(t, Options{})
	r := rt.round(formCaps, "", "")
	if _, err := r.Suspended(rt.sealer, rt.b); err == nil {
		t.Fatal("suspending without a question must fail")
	}
	_, _ = elicitQ(r, "k", confirmForm(t, "one"))
	if _, err := elicitQ(r, "k", confirmForm(t, "two")); err == nil || errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("the same key for two questions must be an error, got %v", err)
	}
	if _, err := elicitQ(r, "", confirmForm(t, "x")); err == nil || errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatalf("an empty key must be an error, got %v", err)
	}
	if _, err := elicitQ(r, "k", nil); err == nil {
		t.Fatal("a nil request must be an error")
	}

	s := rt.round(formCaps, "", "")
	if err := s.Suspend(); !errors.Is(err, mrtr.ErrInputRequired) {
		t.Fatal(err)
	}
	if err := s.SaveState("resume-here"); err != nil {
		t.Fatal(err)
	}
	irr, err := s.Suspended(rt.sealer, rt.b)
	if err != nil || len(irr.Questions) != 0 || irr.RequestState == "" {
		t.Fatalf("state-only suspension: %+v, %v", irr, err)
	}
	var payload string
	if ok, err := rt.round(formCaps, irr.RequestState, "").LoadState(&payload); !ok || err != nil || payload != "resume-here" {
		t.Fatalf("payload = %q, %v, %v", payload, ok, err)
	}
}

func TestMissing(t *testing.T) {
	url := mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &mcp.Empty{}}}
	for _, tc := range []struct {
		name      string
		have, req mcp.ClientCapabilities
		missing   string // JSON of the missing part, "" when nothing
	}{
		{"nothing required", mcp.ClientCapabilities{}, mcp.ClientCapabilities{}, ""},
		{"sampling", mcp.ClientCapabilities{}, mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, `{"sampling":{}}`},
		{"sampling present", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, ""},
		{"sampling tools", mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}}, mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{Tools: &mcp.Empty{}}}, `{"sampling":{"tools":{}}}`},
		{"form by {}", formCaps, mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, ""},
		{"url from form-only", formCaps, url, `{"elicitation":{"url":{}}}`},
		{"form from url-only", url, mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, `{"elicitation":{"form":{}}}`},
		{"roots", formCaps, mcp.ClientCapabilities{Roots: &mcp.RootsCapability{}}, `{"roots":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := tc.have.Missing(tc.req)
			if tc.missing == "" {
				if ok {
					t.Fatalf("reported missing %+v", m)
				}
				return
			}
			b, _ := json.Marshal(m)
			if !ok || string(b) != tc.missing {
				t.Fatalf("missing = %s (%v), want %s", b, ok, tc.missing)
			}
		})
	}
}
