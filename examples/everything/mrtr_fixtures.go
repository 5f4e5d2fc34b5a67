package main

// Multi round-trip requests (SEP-2322): the fixtures of the conformance
// suite's input-required-result-* scenarios, and of server-stateless's
// checks on capabilities and streams (2026-07-28 requirements).
//
// Each handler asks with the methods of server.Call in plain sequence
// (req.Elicit, req.CreateMessage, req.ListRoots, or req.AskAll for
// several questions in one round). While an answer is missing the ask
// returns an error wrapping mrtr.ErrInputRequired; the handler returns it
// and the server answers input_required with the question under its key
// and a sealed requestState. The suite retries with inputResponses and the
// state, and the handler runs again from the top: the questions answered
// so far return their answers. The suite names the keys it answers, so
// these fixtures give each question its key with server.WithKey (or
// mrtr.InputRequest.Keyed).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// mrtrFixtures holds the questions the fixtures ask, built once.
type mrtrFixtures struct {
	name    *elicit.Request // {name}, required: "What is your name?"
	ok      *elicit.Request // {ok: boolean}, required
	step1   *elicit.Request // multi_round's first question, {name}
	step2   *elicit.Request // multi_round's second question, {color}
	context *elicit.Request // the prompt's question, {context}
	note    *elicit.Request // streaming_elicitation's question, {note}

	capital  *mcp.CreateMessageParams // "What is the capital of France?", 100 tokens
	greeting *mcp.CreateMessageParams // "Generate a greeting", 50 tokens
}

func newMRTRFixtures() (*mrtrFixtures, error) {
	f := &mrtrFixtures{
		capital:  &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("What is the capital of France?")}, MaxTokens: 100},
		greeting: &mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("Generate a greeting")}, MaxTokens: 50},
	}
	var errs [6]error
	f.name, errs[0] = askText("What is your name?", "name")
	f.ok, errs[1] = elicit.NewForm("Please confirm", elicit.Boolean("ok").Required())
	f.step1, errs[2] = askText("Step 1: What is your name?", "name")
	f.step2, errs[3] = askText("Step 2: What is your favorite color?", "color")
	f.context, errs[4] = askText("What context should the prompt use?", "context")
	f.note, errs[5] = askText("Anything to add?", "note")
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return f, nil
}

func addMRTRFixtures(srv *server.Server) error {
	f, err := newMRTRFixtures()
	if err != nil {
		return err
	}
	err = addTools(srv, []toolFixture{
		{noArgs("test_input_required_result_elicitation", "Asks for a name, then greets"), f.elicitation, []server.ToolOption{server.AnswersWithoutState()}},
		{noArgs("test_input_required_result_sampling", "Asks the client's model a question"), f.sampling, nil},
		{noArgs("test_input_required_result_list_roots", "Asks for the client's roots"), f.listRoots, nil},
		{noArgs("test_input_required_result_request_state", "Round-trips a requestState"), f.requestState, nil},
		{noArgs("test_input_required_result_multiple_inputs", "Asks three questions at once"), f.multipleInputs, nil},
		{noArgs("test_input_required_result_multi_round", "Asks two questions in two rounds"), f.multiRound, nil},
		{noArgs("test_input_required_result_tampered_state", "Refuses a tampered requestState"), f.tamperedState, nil},
		{noArgs("test_input_required_result_capabilities", "Asks only what the client can answer"), f.capabilities, nil},
		{noArgs("test_missing_capability", "Needs sampling"), f.missingCapability, nil},
		{noArgs("test_streaming_elicitation", "Streams progress, then asks through input_required"), f.streamingElicitation,
			[]server.ToolOption{server.RequireCapabilities(mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}})}},
	})
	if err != nil {
		return err
	}
	return srv.AddPrompt(server.Prompt{Name: "test_input_required_result_prompt", Description: "Asks for context before building the prompt"}, f.prompt)
}

// elicitation is test_input_required_result_elicitation
// (input-required-result-basic-elicitation, -missing-input-response,
// -result-type, -ignore-extra-params, -validate-input): round 1 asks
// "What is your name?" under key user_name; the retry with an accepted
// answer gets "Hello, <name>!". A retry whose answer is missing, under
// another key, or invalid is asked again (or refused), never completed
// from bad data.
//
// The suite also sends this answer without the requestState of a first
// round; the answer grants nothing, so the tool opts in to matching
// answers by key alone (AnswersWithoutState).
func (f *mrtrFixtures) elicitation(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	res, err := req.Elicit(ctx, f.name, server.WithKey("user_name"))
	if err != nil {
		return nil, err
	}
	name, ok := acceptedString(res, "name")
	if !ok {
		return server.ErrorResult("No name given (" + string(res.Action) + ")"), nil
	}
	return server.TextResult("Hello, " + name + "!"), nil
}

// sampling is test_input_required_result_sampling
// (input-required-result-basic-sampling): a sampling request under key
// sample_request, then "Sampled: <text>".
func (f *mrtrFixtures) sampling(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	res, err := req.CreateMessage(ctx, f.capital, server.WithKey("sample_request"))
	if err != nil {
		return nil, err
	}
	return server.TextResult("Sampled: " + res.Text()), nil
}

// listRoots is test_input_required_result_list_roots
// (input-required-result-basic-list-roots): roots/list under key
// roots_request, then "Roots: <uris>".
func (f *mrtrFixtures) listRoots(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	res, err := req.ListRoots(ctx, server.WithKey("roots_request"))
	if err != nil {
		return nil, err
	}
	return server.TextResult("Roots: " + rootURIs(res)), nil
}

// requestState is test_input_required_result_request_state
// (input-required-result-request-state): round 1 asks {ok} under key
// confirm and saves a marker with SaveState; the retry must bring the
// state back (LoadState finds the marker) for the text to say "state-ok".
func (f *mrtrFixtures) requestState(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	type marker struct {
		Marker string `json:"marker"`
	}
	var st marker
	resumed, err := req.LoadState(&st)
	if err != nil {
		return nil, err
	}
	res, err := req.Elicit(ctx, f.ok, server.WithKey("confirm"))
	if err != nil {
		if errors.Is(err, mrtr.ErrInputRequired) {
			if err := req.SaveState(marker{"issued"}); err != nil {
				return nil, err
			}
		}
		return nil, err
	}
	if !resumed || st.Marker != "issued" {
		return server.ErrorResult("requestState missing"), nil
	}
	return server.TextResult(fmt.Sprintf("state-ok: confirmation %s", res.Action)), nil
}

// multipleInputs is test_input_required_result_multiple_inputs
// (input-required-result-multiple-input-requests): one input_required
// result with three keys, user_name (elicitation), greeting (sampling) and
// client_roots (roots/list); complete once all three are answered.
func (f *mrtrFixtures) multipleInputs(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	ans, err := req.AskAll(ctx, []mrtr.InputRequest{
		mrtr.ElicitRequest(f.name).Keyed("user_name"),
		mrtr.SampleRequest(f.greeting).Keyed("greeting"),
		mrtr.RootsRequest().Keyed("client_roots"),
	})
	if err != nil {
		return nil, err
	}
	name, _ := acceptedString(ans[0].Elicit, "name")
	return server.TextResult(fmt.Sprintf("Name: %s; greeting: %s; roots: %s", name, ans[1].Sample.Text(), rootURIs(ans[2].Roots))), nil
}

// multiRound is test_input_required_result_multi_round
// (input-required-result-multi-round): round 1 asks user_name, round 2
// favorite_color, round 3 answers "<name> likes <color>". Two questions in
// plain sequence: the name answered in round 2 rides in the state of round
// 2's input_required, so round 3 finds it without the handler saving
// anything.
func (f *mrtrFixtures) multiRound(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	res, err := req.Elicit(ctx, f.step1, server.WithKey("user_name"))
	if err != nil {
		return nil, err
	}
	name, _ := acceptedString(res, "name")
	res, err = req.Elicit(ctx, f.step2, server.WithKey("favorite_color"))
	if err != nil {
		return nil, err
	}
	color, _ := acceptedString(res, "color")
	return server.TextResult(fmt.Sprintf("%s likes %s", name, color)), nil
}

// tamperedState is test_input_required_result_tampered_state
// (input-required-result-tampered-state): round 1 asks {ok} under key
// confirm; a retry whose requestState was edited is refused with -32602
// before the handler runs.
func (f *mrtrFixtures) tamperedState(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	if _, err := req.Elicit(ctx, f.ok, server.WithKey("confirm")); err != nil {
		return nil, err
	}
	return server.TextResult("state verified"), nil
}

// capabilities is test_input_required_result_capabilities
// (input-required-result-capability-check): it asks only what the
// request's envelope declares the client can answer, elicit_input with
// elicitation and sample_input with sampling, in one round.
func (f *mrtrFixtures) capabilities(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	caps := req.Capabilities()
	var asks []mrtr.InputRequest
	if caps.CanElicitForm() {
		asks = append(asks, mrtr.ElicitRequest(f.name).Keyed("elicit_input"))
	}
	if caps.CanSample() {
		asks = append(asks, mrtr.SampleRequest(f.capital).Keyed("sample_input"))
	}
	if len(asks) == 0 {
		return server.TextResult("The client declared neither elicitation nor sampling"), nil
	}
	ans, err := req.AskAll(ctx, asks)
	if err != nil {
		return nil, err
	}
	var parts []string
	for _, a := range ans {
		switch {
		case a.Elicit != nil:
			n, _ := acceptedString(a.Elicit, "name")
			parts = append(parts, "name="+n)
		case a.Sample != nil:
			parts = append(parts, "sampled="+a.Sample.Text())
		}
	}
	return server.TextResult(strings.Join(parts, "; ")), nil
}

// missingCapability is test_missing_capability (server-stateless): it
// needs sampling; called without sampling in the envelope, the ask fails
// with a *mcp.MissingCapabilityError, which the server answers -32021
// with data.requiredCapabilities {sampling: {}} and HTTP 400.
func (f *mrtrFixtures) missingCapability(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	res, err := req.CreateMessage(ctx, f.capital, server.WithKey("sample_request"))
	if err != nil {
		return nil, err
	}
	return server.TextResult("Sampled: " + res.Text()), nil
}

// streamingElicitation is test_streaming_elicitation (server-stateless): it
// reports progress and logs, then asks. The server must never put a
// request to the client on the response stream, only notifications: the
// question goes in the input_required result at the end of the stream.
//
// It declares that it needs elicitation (RequireCapabilities), so a client
// without it gets -32021 with HTTP 400 before any progress opens the event
// stream. On a 2025-11-25 session, where the question is a real request,
// the client still sees each notification once: progress 1 then 2, two
// log lines.
func (f *mrtrFixtures) streamingElicitation(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
	if err := req.Progress(ctx, 1, 2, "preparing the question"); err != nil {
		return nil, err
	}
	if err := req.Log(ctx, slog.LevelInfo, "test_streaming_elicitation", "preparing the question"); err != nil {
		return nil, err
	}
	res, err := req.Elicit(ctx, f.note, server.WithKey("note"))
	if err != nil {
		return nil, err
	}
	if err := req.Progress(ctx, 2, 2, "answered"); err != nil {
		return nil, err
	}
	if err := req.Log(ctx, slog.LevelInfo, "test_streaming_elicitation", "answered: "+string(res.Action)); err != nil {
		return nil, err
	}
	return server.TextResult("Elicitation " + string(res.Action)), nil
}

// prompt is test_input_required_result_prompt
// (input-required-result-non-tool-request): prompts/get may ask too. It
// asks {context} under key user_context, then answers one message,
// "Context: <context>".
func (f *mrtrFixtures) prompt(ctx context.Context, req *server.PromptRequest) (*server.PromptResult, error) {
	res, err := req.Elicit(ctx, f.context, server.WithKey("user_context"))
	if err != nil {
		return nil, err
	}
	c, _ := acceptedString(res, "context")
	return &server.PromptResult{Messages: []server.PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("Context: " + c)}}}, nil
}

// askText returns a form asking for one required string field.
func askText(message, field string) (*elicit.Request, error) {
	return elicit.NewForm(message, elicit.String(field).Required())
}

// acceptedString returns the string field of an accepted answer.
func acceptedString(res *elicit.Result, field string) (string, bool) {
	if res.Action != elicit.ActionAccept {
		return "", false
	}
	var m map[string]any
	if err := res.Decode(&m); err != nil {
		return "", false
	}
	s, ok := m[field].(string)
	return s, ok
}

// rootURIs lists the roots' URIs, comma-separated.
func rootURIs(res *mcp.ListRootsResult) string {
	uris := make([]string, len(res.Roots))
	for i, r := range res.Roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}
