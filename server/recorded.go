package server

import (
	"bytes"
	"encoding/json"

	"github.com/baton-mcp/baton/elicit"
)

// An elicitation answer that passed elicit.Request.CheckResult is recorded
// in the sealed state in a form of the server's own making: a JSON array
// whose first element is a digit naming the action, [0,CONTENT] or [0]
// (accept), [1] (decline) or [2] (cancel), CONTENT being the checked
// content (undefined properties removed). Earlier releases wrote the
// action's name, ["accept",CONTENT], ["accept"], ["decline"] or
// ["cancel"]; states they sealed are read too. A client's ElicitResult is
// an object, so no answer recorded as sent (by an earlier version) can be
// mistaken for either. The state is signed with the server's key, so this
// form proves the answer was checked against the question with the
// recorded digest: a later round hands it over without parsing and
// validating it again (round.Check). The digit saves the action's name
// (7 bytes of an accept) in every carried answer, which every retry
// carries, decrypts and base64url-decodes again.

// appendCheckedElicit appends the recorded form of res, a result
// CheckResult accepted, to dst.
func appendCheckedElicit(dst []byte, res *elicit.Result) []byte {
	dst = append(dst, '[')
	switch res.Action {
	case elicit.ActionAccept:
		dst = append(dst, '0')
		if len(res.Content) > 0 {
			dst = append(dst, ',')
			dst = append(dst, res.Content...)
		}
	case elicit.ActionDecline:
		dst = append(dst, '1')
	default: // CheckResult accepts no other action
		dst = append(dst, '2')
	}
	return append(dst, ']')
}

// checkedAction is the action a recorded form's digit names.
var checkedAction = [3]elicit.Action{elicit.ActionAccept, elicit.ActionDecline, elicit.ActionCancel}

// checkedElicit reads the recorded form appendCheckedElicit wrote into
// dst (new when nil) and returns it. It reports false for anything else
// (an answer recorded as the client sent it), which the caller checks in
// full.
func checkedElicit(req *elicit.Request, rec json.RawMessage, dst *elicit.Result) (*elicit.Result, bool) {
	if len(rec) < 3 || rec[0] != '[' || rec[len(rec)-1] != ']' {
		return nil, false
	}
	if d := rec[1] - '0'; d < 3 {
		var content json.RawMessage
		switch {
		case len(rec) == 3:
		case d == 0 && len(rec) > 4 && rec[2] == ',' && rec[3] == '{': // ends with '}' before ']': checked when recorded
			if rec[len(rec)-2] != '}' {
				return nil, false
			}
			content = json.RawMessage(rec[3 : len(rec)-1])
		default:
			return nil, false
		}
		return checkedResult(req, checkedAction[d], content, dst), true
	}
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
	case action == elicit.ActionAccept && len(rest) > 3 && rest[0] == ',' && rest[1] == '{' && rest[len(rest)-2] == '}' && rest[len(rest)-1] == ']':
		content = json.RawMessage(rest[1 : len(rest)-1])
	default:
		return nil, false
	}
	return checkedResult(req, action, content, dst), true
}

// checkedResult is req.CheckedResult(action, content), written into dst
// when it is not nil.
func checkedResult(req *elicit.Request, action elicit.Action, content json.RawMessage, dst *elicit.Result) *elicit.Result {
	if dst == nil {
		return req.CheckedResult(action, content)
	}
	*dst = *req.CheckedResult(action, content) // inlined: no allocation
	return dst
}
