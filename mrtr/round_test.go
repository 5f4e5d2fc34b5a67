package mrtr

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/client"
	"github.com/baton-mcp/baton/elicit"
)

var formCaps = client.Capabilities{Elicitation: &client.ElicitationCapability{}}

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
	sealer *Sealer
	b      Binding
	opts   RoundOptions
}

func (rt roundTrip) round(caps client.Capabilities, token string, answers string) *Round {
	rt.t.Helper()
	var st *State
	if token != "" {
		var err error
		if st, err = openBound(rt.sealer, token, rt.b); err != nil {
			rt.t.Fatalf("open state: %v", err)
		}
	}
	var responses map[string]json.RawMessage
	if answers != "" {
		var err error
		if responses, err = ParseResponses(json.RawMessage(answers)); err != nil {
			rt.t.Fatal(err)
		}
	}
	return NewRound(caps, responses, st, rt.opts)
}

func newRoundTrip(t *testing.T, opts RoundOptions) roundTrip {
	return roundTrip{t: t, sealer: testSealer(t, SealerOptions{}), b: testBinding(t), opts: opts}
}

func TestElicitTwoRounds(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	form := confirmForm(t, "Transfer 25 to bob?")

	r1 := rt.round(formCaps, "", "")
	if r1.Resumed() || r1.StateID() != "" {
		t.Fatal("round 1 has no state")
	}
	_, err := r1.Elicit("confirm", form)
	if !errors.Is(err, ErrInputRequired) {
		t.Fatalf("round 1: err = %v, want ErrInputRequired", err)
	}
	if err := r1.SaveState(map[string]int{"round": 1}); err != nil {
		t.Fatal(err)
	}
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	if len(irr.InputRequests) != 1 || irr.InputRequests[0].Key != "confirm" || irr.InputRequests[0].Request.Elicitation() != form {
		t.Fatalf("input requests = %+v", irr.InputRequests)
	}

	r2 := rt.round(formCaps, irr.RequestState, `{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	if !r2.Resumed() || r2.StateID() == "" {
		t.Fatal("round 2 should resume a verified state")
	}
	var st map[string]int
	if ok, err := r2.LoadState(&st); !ok || err != nil || st["round"] != 1 {
		t.Fatalf("LoadState = %v, %v, %v", ok, err, st)
	}
	res, err := r2.Elicit("confirm", form)
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
	rt := newRoundTrip(t, RoundOptions{})
	form := confirmForm(t, "ok?")
	r1 := rt.round(formCaps, "", "")
	_, _ = r1.Elicit("c", form)
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	for _, action := range []elicit.Action{elicit.ActionDecline, elicit.ActionCancel} {
		r2 := rt.round(formCaps, irr.RequestState, `{"c":{"action":"`+string(action)+`"}}`)
		res, err := r2.Elicit("c", form)
		if err != nil || res.Action != action {
			t.Fatalf("%s: res = %+v, err = %v", action, res, err)
		}
	}
}

func TestAnswersNobodyAskedForAreIgnored(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	form := confirmForm(t, "ok?")
	r1 := rt.round(formCaps, "", "")
	_, _ = r1.Elicit("confirm", form)
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	// The retry answers "confirm" and also "other", which was never issued.
	r2 := rt.round(formCaps, irr.RequestState, `{"confirm":{"action":"accept","content":{"confirm":true}},"other":{"action":"accept","content":{"confirm":true}}}`)
	if _, err := r2.Elicit("confirm", form); err != nil {
		t.Fatalf("issued key: %v", err)
	}
	if _, err := r2.Elicit("other", form); !errors.Is(err, ErrInputRequired) {
		t.Fatalf("a key the state never issued must be asked, not answered: err = %v", err)
	}
}

func TestChangedQuestionIsAskedAgain(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	r1 := rt.round(formCaps, "", "")
	_, _ = r1.Elicit("confirm", confirmForm(t, "Transfer 25 to bob?"))
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r2 := rt.round(formCaps, irr.RequestState, `{"confirm":{"action":"accept","content":{"confirm":true}}}`)
	if _, err := r2.Elicit("confirm", confirmForm(t, "Transfer 9000 to mallory?")); !errors.Is(err, ErrInputRequired) {
		t.Fatalf("an answer to another question must not be handed over: err = %v", err)
	}
}

func TestMissingAnswerAsksAgain(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	form := confirmForm(t, "ok?")
	r1 := rt.round(formCaps, "", "")
	_, _ = r1.Elicit("confirm", form)
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	r2 := rt.round(formCaps, irr.RequestState, `{}`)
	if _, err := r2.Elicit("confirm", form); !errors.Is(err, ErrInputRequired) {
		t.Fatalf("err = %v, want ErrInputRequired", err)
	}
	irr2, err := r2.Suspended(rt.sealer, rt.b)
	if err != nil || irr2.RequestState == irr.RequestState || len(irr2.InputRequests) != 1 {
		t.Fatalf("a fresh input_required is expected: %+v, %v", irr2, err)
	}
}

func TestAnswersWithoutState(t *testing.T) {
	form := confirmForm(t, "ok?")
	answer := `{"confirm":{"action":"accept","content":{"confirm":true}}}`

	strict := newRoundTrip(t, RoundOptions{})
	if _, err := strict.round(formCaps, "", answer).Elicit("confirm", form); !errors.Is(err, ErrInputRequired) {
		t.Fatalf("by default an answer without state is ignored: err = %v", err)
	}
	lenient := newRoundTrip(t, RoundOptions{AnswersWithoutState: true})
	r := lenient.round(formCaps, "", answer)
	if res, err := r.Elicit("confirm", form); err != nil || res.Action != elicit.ActionAccept {
		t.Fatalf("with AnswersWithoutState: %+v, %v", res, err)
	}
	if _, err := r.Elicit("unasked", form); !errors.Is(err, ErrInputRequired) {
		t.Fatalf("only asked keys are answered: %v", err)
	}
}

func TestInvalidAnswers(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{AnswersWithoutState: true})
	form := confirmForm(t, "ok?")
	for _, tc := range []struct{ name, answers string }{
		{"number", `{"confirm":12345}`},
		{"null", `{"confirm":null}`},
		{"bad action", `{"confirm":{"action":"maybe"}}`},
		{"wrong type", `{"confirm":{"action":"accept","content":{"confirm":"yes"}}}`},
		{"missing required", `{"confirm":{"action":"accept","content":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rt.round(formCaps, "", tc.answers).Elicit("confirm", form)
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
	if m, err := ParseResponses(nil); err != nil || m != nil {
		t.Fatalf("absent inputResponses: %v, %v", m, err)
	}
}

func TestCapabilitiesGateQuestions(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	urlReq, err := elicit.NewURL("Sign in", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	sample := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("hi")}, MaxTokens: 10}
	for _, tc := range []struct {
		name string
		caps client.Capabilities
		ask  func(r *Round) error
		want string
	}{
		{"form without elicitation", client.Capabilities{}, func(r *Round) error { _, err := r.Elicit("k", confirmForm(t, "x")); return err }, `"elicitation":{}`},
		{"url with form only", formCaps, func(r *Round) error { _, err := r.Elicit("k", urlReq); return err }, `"url":{}`},
		{"sampling", formCaps, func(r *Round) error { _, err := r.Sample("k", sample); return err }, `"sampling":{}`},
		{"roots", formCaps, func(r *Round) error { _, err := r.ListRoots("k"); return err }, `"roots":{}`},
		{"sampling tools", client.Capabilities{Sampling: &client.SamplingCapability{}}, func(r *Round) error {
			p := *sample
			p.ToolChoice = &client.ToolChoice{Mode: "auto"}
			_, err := r.Sample("k", &p)
			return err
		}, `"tools":{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rt.round(tc.caps, "", "")
			err := tc.ask(r)
			var mc *client.MissingCapabilityError
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
	r := rt.round(client.Capabilities{Elicitation: &client.ElicitationCapability{URL: &client.Empty{}}}, "", "")
	if _, err := r.Elicit("k", urlReq); !errors.Is(err, ErrInputRequired) {
		t.Fatalf("url elicitation with url declared: %v", err)
	}
	// Declaring only url does not grant form.
	if _, err := r.Elicit("f", confirmForm(t, "x")); err == nil || errors.Is(err, ErrInputRequired) {
		t.Fatalf("form elicitation with only url declared: %v", err)
	}
}

func TestSeveralQuestionsAtOnce(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	caps := client.Capabilities{Elicitation: &client.ElicitationCapability{}, Sampling: &client.SamplingCapability{}, Roots: &client.RootsCapability{}}
	sample := &client.CreateMessageParams{Messages: []client.SamplingMessage{client.UserText("Generate a greeting")}, MaxTokens: 50}
	form := confirmForm(t, "ok?")
	ask := func(r *Round) error {
		_, e1 := r.Elicit("user", form)
		_, e2 := r.Sample("greeting", sample)
		_, e3 := r.ListRoots("roots")
		return errors.Join(e1, e2, e3)
	}
	r1 := rt.round(caps, "", "")
	if err := ask(r1); !errors.Is(err, ErrInputRequired) {
		t.Fatal(err)
	}
	irr, err := r1.Suspended(rt.sealer, rt.b)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(irr.InputRequests)
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
	if !errors.Is(err, ErrInputRequired) || len(r2.Pending()) != 1 || r2.Pending()[0].Key != "greeting" {
		t.Fatalf("err = %v, pending = %v", err, r2.Pending())
	}
}

func TestRoundMisuse(t *testing.T) {
	rt := newRoundTrip(t, RoundOptions{})
	r := rt.round(formCaps, "", "")
	if _, err := r.Suspended(rt.sealer, rt.b); err == nil {
		t.Fatal("suspending without a question must fail")
	}
	_, _ = r.Elicit("k", confirmForm(t, "one"))
	if _, err := r.Elicit("k", confirmForm(t, "two")); err == nil || errors.Is(err, ErrInputRequired) {
		t.Fatalf("the same key for two questions must be an error, got %v", err)
	}
	if _, err := r.Elicit("", confirmForm(t, "x")); err == nil || errors.Is(err, ErrInputRequired) {
		t.Fatalf("an empty key must be an error, got %v", err)
	}
	if _, err := r.Elicit("k", nil); err == nil {
		t.Fatal("a nil request must be an error")
	}

	s := rt.round(formCaps, "", "")
	if err := s.Suspend(); !errors.Is(err, ErrInputRequired) {
		t.Fatal(err)
	}
	if err := s.SaveState("resume-here"); err != nil {
		t.Fatal(err)
	}
	irr, err := s.Suspended(rt.sealer, rt.b)
	if err != nil || len(irr.InputRequests) != 0 || irr.RequestState == "" {
		t.Fatalf("state-only suspension: %+v, %v", irr, err)
	}
	var payload string
	if ok, err := rt.round(formCaps, irr.RequestState, "").LoadState(&payload); !ok || err != nil || payload != "resume-here" {
		t.Fatalf("payload = %q, %v, %v", payload, ok, err)
	}
}

func TestMissing(t *testing.T) {
	url := client.Capabilities{Elicitation: &client.ElicitationCapability{URL: &client.Empty{}}}
	for _, tc := range []struct {
		name      string
		have, req client.Capabilities
		missing   string // JSON of the missing part, "" when nothing
	}{
		{"nothing required", client.Capabilities{}, client.Capabilities{}, ""},
		{"sampling", client.Capabilities{}, client.Capabilities{Sampling: &client.SamplingCapability{}}, `{"sampling":{}}`},
		{"sampling present", client.Capabilities{Sampling: &client.SamplingCapability{}}, client.Capabilities{Sampling: &client.SamplingCapability{}}, ""},
		{"sampling tools", client.Capabilities{Sampling: &client.SamplingCapability{}}, client.Capabilities{Sampling: &client.SamplingCapability{Tools: &client.Empty{}}}, `{"sampling":{"tools":{}}}`},
		{"form by {}", formCaps, client.Capabilities{Elicitation: &client.ElicitationCapability{}}, ""},
		{"url from form-only", formCaps, url, `{"elicitation":{"url":{}}}`},
		{"form from url-only", url, client.Capabilities{Elicitation: &client.ElicitationCapability{}}, `{"elicitation":{"form":{}}}`},
		{"roots", formCaps, client.Capabilities{Roots: &client.RootsCapability{}}, `{"roots":{}}`},
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
