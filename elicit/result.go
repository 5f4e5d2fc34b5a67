package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Action is the user's response to an elicitation.
type Action string

// The three actions of an ElicitResult.
const (
	// ActionAccept means the user submitted the form, or, in URL mode,
	// consented to open the URL (which says nothing about completion).
	ActionAccept Action = "accept"
	// ActionDecline means the user explicitly refused.
	ActionDecline Action = "decline"
	// ActionCancel means the user dismissed the request without choosing.
	ActionCancel Action = "cancel"
)

// Valid reports whether a is one of the three defined actions.
func (a Action) Valid() bool {
	return a == ActionAccept || a == ActionDecline || a == ActionCancel
}

// Result is an ElicitResult: the client's answer to an elicitation. It is
// not an MCP Result, so it has no resultType; a _meta field and unknown
// fields are ignored when parsing.
type Result struct {
	// Action is what the user did: "accept", "decline" or "cancel"
	// ("action", required).
	Action Action `json:"action"`
	// Content holds the submitted values (accepted form requests only): a
	// JSON object whose values are strings, numbers, booleans or arrays
	// of strings ("content"). It is absent for decline, cancel and an
	// accepted URL request, and omitted when nil.
	Content json.RawMessage `json:"content,omitempty"`

	schema *Schema // the schema content was checked against, with a cache (nil: Decode checks keys in full)
}

// parseResultJSON parses and shape-checks an ElicitResult: data must be a JSON
// object without duplicate keys; action must be accept, decline or cancel;
// content, if present (and not null), must be an object of string, number,
// boolean or string-array values, and is only allowed with accept. Keys
// are matched exactly (case-sensitively). It does not check content
// against any schema; use [Request.CheckResult] for that.
func parseResultJSON(data []byte) (*Result, error) {
	res, _, _, err := parseResult(data)
	return res, err
}

// parseResult also returns the decoded content (an empty map when absent)
// and its keys in document order. Keys match exactly: encoding/json's
// case-insensitive matching would let "ACTION" override "action".
func parseResult(data []byte) (*Result, map[string]any, []string, error) {
	if firstByte(data) != '{' {
		return nil, nil, nil, errors.New("elicit: invalid result: must be a JSON object")
	}
	members, err := decodeObject(data, "result")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("elicit: invalid result: %w", err)
	}
	var rawAction, rawContent json.RawMessage
	for _, m := range members {
		switch m.Key {
		case "action":
			rawAction = m.Value
		case "content":
			rawContent = m.Value
		}
	}
	if rawAction == nil {
		return nil, nil, nil, errors.New("elicit: invalid result: missing action")
	}
	a, err := parseString(rawAction)
	if err != nil || !Action(a).Valid() {
		return nil, nil, nil, fmt.Errorf("elicit: invalid result: action must be %q, %q or %q", ActionAccept, ActionDecline, ActionCancel)
	}
	res := &Result{Action: Action(a)}
	if c := bytes.TrimSpace(rawContent); len(c) > 0 && string(c) != "null" {
		if res.Action != ActionAccept {
			return nil, nil, nil, fmt.Errorf("elicit: invalid result: content is only allowed with %q, not %q", ActionAccept, res.Action)
		}
		res.Content = c
	}
	doc, keys, err := decodeValidContent(res.Content)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("elicit: invalid result: %w", err)
	}
	return res, doc, keys, nil
}

// Decode unmarshals the accepted content into v (a pointer to a struct or
// map) like encoding/json's Unmarshal, with one difference: keys match
// struct fields exactly, never case-insensitively. A field takes the key
// its json tag names or, without a tag, its Go name exactly as spelled:
// content {"name": "Ada"} does not fill field Name. Rather than leave such
// a field silently zero, Decode fails when a key matches a field only if
// case is ignored, with an error naming the key, the field and the fix
// (the tag `json:"name"`). Keys that match no field are ignored. It
// returns [ErrDeclined] for decline and [ErrCancelled] for cancel (both
// match [ErrNotAccepted] with errors.Is). An accepted result without
// content decodes as an empty object.
func (r *Result) Decode(v any) error {
	if r == nil {
		return errors.New("elicit: Decode on a nil result")
	}
	switch r.Action {
	case ActionAccept:
	case ActionDecline:
		return ErrDeclined
	case ActionCancel:
		return ErrCancelled
	default:
		return fmt.Errorf("elicit: cannot decode a %q result: %w", r.Action, ErrNotAccepted)
	}
	content := r.Content
	// Content that begins with '{' (every accepted form content checked or
	// recorded by the server) is not blank: TrimSpace only for the rest.
	if len(content) == 0 || content[0] != '{' && len(bytes.TrimSpace(content)) == 0 {
		content = json.RawMessage("{}")
	}
	if err := r.schema.bindChecked(content, v); err != nil {
		return fmt.Errorf("elicit: decoding content: %w", err)
	}
	return nil
}
