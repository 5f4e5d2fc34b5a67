package server

import (
	"bytes"
	"encoding/json"

	"github.com/baton-mcp/baton/elicit"
)

// An elicitation answer that passed elicit.Request.CheckResult is recorded
// in the sealed state in a form of the server's own making: a JSON array,
// ["accept",CONTENT], ["accept"], ["decline"] or ["cancel"], CONTENT being
// the checked content (undefined properties removed). A client's
// ElicitResult is an object, so no answer recorded as sent (by an earlier
// version) can be mistaken for it. The state is signed with the server's
// key, so this form proves the answer was checked against the question
// with the recorded digest: a later round hands it over without parsing
// and validating it again (round.Check).

// appendCheckedElicit appends the recorded form of res, a result
// CheckResult accepted, to dst.
func appendCheckedElicit(dst []byte, res *elicit.Result) []byte {
	dst = append(dst, `["`...)
	dst = append(dst, res.Action...)
	dst = append(dst, '"')
	if res.Action == elicit.ActionAccept && len(res.Content) > 0 {
		dst = append(dst, ',')
		dst = append(dst, res.Content...)
	}
	return append(dst, ']')
}

// checkedElicit reads the recorded form appendCheckedElicit wrote into
// dst (new when nil) and returns it. It reports false for anything else
// (an answer recorded as the client sent it), which the caller checks in
// full.
func checkedElicit(req *elicit.Request, rec json.RawMessage, dst *elicit.Result) (*elicit.Result, bool) {
	rest, ok := bytes.CutPrefix(rec, []byte(`["`))
	if !ok {
		return nil, false
	}
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return nil, false
	}
	var action elicit.Action
	switch string(rest[:end]) { // compared, not copied
	case string(elicit.ActionAccept):
		action = elicit.ActionAccept
	case string(elicit.ActionDecline):
		action = elicit.ActionDecline
	case string(elicit.ActionCancel):
		action = elicit.ActionCancel
	default:
		return nil, false
	}
	rest = rest[end+1:]
	var content json.RawMessage
	switch {
	case len(rest) == 1 && rest[0] == ']':
	case action == elicit.ActionAccept && len(rest) > 2 && rest[0] == ',' && rest[1] == '{' && rest[len(rest)-1] == ']':
		content = json.RawMessage(rest[1 : len(rest)-1])
	default:
		return nil, false
	}
	if dst == nil {
		return req.CheckedResult(action, content), true
	}
	*dst = *req.CheckedResult(action, content) // inlined: no allocation
	return dst, true
}
