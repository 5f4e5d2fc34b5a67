package server

import (
	"encoding/json"
	"fmt"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/round"
)

// On the stateless protocol a handler runs again from the top on every
// round and asks each earlier question again, and each gets the answer
// its sealed state recorded. Handing one over is on the path of every
// request, once per answer carried, so it allocates nothing of its own:
// the question's options are collected into the call's scratch space, and
// the results of the recorded answers come out of one block allocated for
// all the answers the state carries. A recorded answer in the server's
// checked form (recorded.go) is not parsed or validated again; the
// question is still checked as when it was first asked (key, request,
// the client's capabilities), and matched to the recorded one by digest.

// replayScratch is what replayed questions reuse within one call. It is
// guarded by Call.mu.
type replayScratch struct {
	opts    askOptions      // the options of the question being asked
	results []elicit.Result // unused results for recorded answers
}

// result returns a result to fill with a recorded answer: the next of a
// block allocated once for the answers the state carries.
func (s *replayScratch) result(r *round.Round) *elicit.Result {
	if len(s.results) == 0 {
		s.results = make([]elicit.Result, max(r.Recorded(), 1))
	}
	res := &s.results[0]
	s.results = s.results[1:]
	return res
}

// checkElicit checks an answer to the elicitation e and returns the result
// and the form in which to record it (round.Check): an answer the sealed
// state recorded in the checked form is handed over as it is (into a
// result from the call's scratch space); every other answer gets every
// check. c.mu is held when recorded is true.
func (c *Call) checkElicit(e *elicit.Request, raw json.RawMessage, recorded bool) (*elicit.Result, json.RawMessage, error) {
	if recorded {
		if res, ok := checkedElicit(e, raw, c.replay.result(c.round)); ok {
			return res, nil, nil
		}
	}
	res, err := e.CheckResult(raw)
	if err != nil {
		return nil, nil, err
	}
	return res, appendCheckedElicit(make([]byte, 0, len(`["",]`)+len(res.Action)+len(res.Content)), res), nil
}

// elicitReplay is Elicit on the stateless protocol (c.round set, no
// waiting backend): askAll for one question without its slices and
// tables.
func (c *Call) elicitReplay(req *elicit.Request, opts []AskOption) (*elicit.Result, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o := &c.replay.opts
	*o = askOptions{}
	for _, f := range opts {
		f(o)
	}
	e, err := c.prepareElicit(req, o.key)
	if err != nil {
		return nil, err
	}
	pos := c.pos
	c.pos++
	key := o.key
	if key == "" {
		key = round.AutoKey(pos)
	}
	var res *elicit.Result
	_, err = c.round.AskValid(pos, key, mrtr.ElicitRequest(e).Keyed(o.key), func(raw json.RawMessage, recorded bool) (json.RawMessage, error) {
		if recorded { // checkElicit's first step, without its call: once per answer a retry carries
			if r, ok := checkedElicit(e, raw, c.replay.result(c.round)); ok {
				res = r
				return nil, nil
			}
		}
		r, record, err := c.checkElicit(e, raw, false) // the client's answer, or a recorded one not in the checked form: checked in full
		res = r
		return record, err
	})
	if err != nil {
		return nil, err // as askAll returns it for one question
	}
	return res, nil
}

// prepareElicit is prepare for the elicitation e (not nil) asked under key
// ("" for none) on the stateless protocol: the same checks in the same
// order with the same errors (TestPrepareElicitIsPrepare), and the
// request to ask, without copying an mrtr.InputRequest through them (once
// per answer a retry carries).
func (c *Call) prepareElicit(e *elicit.Request, key string) (*elicit.Request, error) {
	if key != "" {
		if err := checkUserKey(key); err != nil {
			return nil, err
		}
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("elicit: %w", err)
	}
	if e.ElicitationID != "" {
		modern := *e
		modern.ElicitationID = "" // not part of 2026-07-28
		e = &modern
	}
	// The declared case first, as CheckCapabilities tests it, without
	// copying the question and the capabilities into its arguments (under
	// valgrind, BenchmarkCarried in bench/, 2026-12-04: about 70
	// instructions per carried answer); anything else gets its error.
	switch caps := &c.Meta.ClientCapabilities; e.Mode {
	case "", elicit.ModeForm:
		if caps.CanElicitForm() {
			return e, nil
		}
	case elicit.ModeURL:
		if caps.CanElicitURL() {
			return e, nil
		}
	}
	if err := mrtr.ElicitRequest(e).CheckCapabilities(c.Meta.ClientCapabilities); err != nil {
		return nil, err
	}
	return e, nil
}
