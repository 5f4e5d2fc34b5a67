package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// compileSchema compiles a JSON Schema (2020-12 unless it names another
// draft). With object set, the root must declare "type": "object".
func compileSchema(what string, raw json.RawMessage, object bool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s schema is not valid JSON: %w", what, err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s schema must be a JSON object", what)
	}
	if object && m["type"] != "object" {
		return nil, fmt.Errorf(`%s schema must have "type": "object"`, what)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%s schema: %w", what, err)
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s schema does not compile: %w", what, err)
	}
	return sch, nil
}

// validateArguments checks decoded arguments against a compiled schema and
// returns a message fit for a model to read, or "".
func validateArguments(sch *jsonschema.Schema, args any) string {
	err := sch.Validate(args)
	if err == nil {
		return ""
	}
	return "invalid arguments: " + schemaProblems(err)
}

// maxProblems is how many problems schemaProblems lists.
const maxProblems = 10

// schemaProblems describes a validation failure by its leaves: where in
// the instance, and what is wrong there (the first maxProblems).
func schemaProblems(err error) string {
	if ve, ok := err.(*jsonschema.ValidationError); ok {
		var msgs []string
		collectLeaves(message.NewPrinter(language.English), ve, &msgs)
		if n := len(msgs); n > maxProblems {
			msgs = append(msgs[:maxProblems], fmt.Sprintf("and %d more", n-maxProblems))
		}
		if len(msgs) > 0 {
			return strings.Join(msgs, "; ")
		}
	}
	return clip.String(err.Error())
}

func collectLeaves(p *message.Printer, ve *jsonschema.ValidationError, out *[]string) {
	if len(ve.Causes) == 0 {
		// Locations and messages carry the peer's keys and values: cut.
		loc := "/" + strings.Join(ve.InstanceLocation, "/")
		*out = append(*out, fmt.Sprintf("at %s: %s", clip.String(loc), clip.String(ve.ErrorKind.LocalizedString(p))))
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(p, c, out)
	}
}

// acceptsAnyObject reports whether an object schema puts no constraint on
// an object's members ({"type":"object"} with at most an empty properties
// and annotations), so validating arguments against it cannot fail.
func acceptsAnyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for k, v := range m {
		switch k {
		case "type":
			if string(bytes.TrimSpace(v)) != `"object"` {
				return false
			}
		case "properties":
			var p map[string]json.RawMessage
			if json.Unmarshal(v, &p) != nil || len(p) != 0 {
				return false
			}
		case "$schema", "title", "description", "$comment":
		default:
			return false
		}
	}
	return true
}

// validMemo remembers the canonical digests of arguments that passed a
// tool's input schema, so an MRTR retry (which must carry the same
// arguments as the round that suspended) is not validated again. Validation
// is a pure function of the compiled schema and the canonical arguments,
// and a new AddTool makes a new entry, so a hit is always the right answer.
// It holds at most validMemoSize digests.
type validMemo struct {
	mu   sync.Mutex
	seen map[seal.Digest]struct{}
}

const validMemoSize = 4096

func (m *validMemo) has(d seal.Digest) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.seen[d]
	return ok
}

func (m *validMemo) add(d seal.Digest) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = make(map[seal.Digest]struct{})
	}
	if len(m.seen) >= validMemoSize {
		for k := range m.seen { // evict an arbitrary entry
			delete(m.seen, k)
			break
		}
	}
	m.seen[d] = struct{}{}
}
