package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// ToolHandlerFor handles tools/call for a typed tool (see AddTool): in
// holds the arguments, already validated against the input schema and
// decoded; the returned Out becomes the result.
//
// Errors map as for a ToolHandler: one wrapping mrtr.ErrInputRequired
// (what req.CreateFormElicitation and the other asks return on the
// stateless protocol while the answer is not known yet) suspends the call
// with input_required; a *mcp.Error is sent as that protocol error;
// any other error becomes an isError result carrying its text, which the
// model reads. Out is ignored when the error is not nil.
type ToolHandlerFor[In, Out any] func(ctx context.Context, req *ToolRequest, in In) (Out, error)

// AddTool registers a typed tool on s, replacing any tool of the same
// name: its input and output JSON Schemas are inferred from In and Out
// (github.com/google/jsonschema-go, the library of the official Go SDK),
// so the schema a client sees and the struct the handler reads cannot
// drift apart.
//
// Inference follows encoding/json: a field's property is named by its json
// tag (or, without one, its Go name exactly), fields tagged "-" are left
// out, and a field is required unless its tag says omitempty or omitzero.
// A `jsonschema:"..."` tag is the property's description. Structs accept
// no properties besides their fields; slices and pointers also accept
// null. What a tag cannot say (enums, formats, bounds, patterns, examples)
// is added by the RefineSchemas option, which edits the inferred schemas
// before they are compiled. Tool.InputSchema and Tool.OutputSchema, when
// set, are used as given instead of inferring.
//
// In must be a struct, a pointer to a struct, or a map with string keys
// (any JSON object decodes into it; with Tool.InputSchema set it may also
// be an interface type). On every call the arguments are validated
// against the input schema (a mismatch is an isError result the model can
// correct, as for raw tools) and then decoded into a fresh In like
// ToolRequest.Bind: keys match fields exactly, and a key that matches a
// field only if case is ignored is reported, not dropped.
//
// Out is either *ToolResult, sent as the handler built it (no output
// schema is inferred; set Tool.OutputSchema to have its structuredContent
// checked), or a struct, pointer to struct or string-keyed map: the
// result then carries Out as structuredContent, checked against the output
// schema, and one text block holding the same JSON (the form the
// specification recommends for clients that do not read structured
// content). A nil Out, or one that does not match the output schema, is a
// bug of the server: it is logged and answered -32603, never sent. Note
// that a nil slice encodes as null (which the inferred schema allows) but
// a nil map does too, which the inferred schema refuses unless the field
// says omitempty.
//
// The options are those of Server.AddTool, and RefineSchemas. Registration fails, and registers
// nothing, when a type cannot be inferred or is not an object, or when a
// schema does not compile.
func AddTool[In, Out any](s *Server, t Tool, h ToolHandlerFor[In, Out], opts ...TypedToolOption) error {
	if s == nil {
		return fmt.Errorf("add tool %q: nil server", t.Name)
	}
	if h == nil {
		return fmt.Errorf("add tool %q: nil handler", t.Name)
	}
	o, err := collectOptions(fmt.Sprintf("add tool %q", t.Name), opts, TypedToolOption.applyTypedTool)
	if err != nil {
		return err
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()
	rawOut := outType == reflect.TypeFor[*ToolResult]()

	var in, out *jsonschema.Schema
	if len(t.InputSchema) == 0 {
		if in, err = inferObject(inType, "In", "the arguments"); err != nil {
			return fmt.Errorf("add tool %q: %w", t.Name, err)
		}
	} else if err := decodesObject(inType, "In"); err != nil {
		return fmt.Errorf("add tool %q: %w", t.Name, err)
	}
	if len(t.OutputSchema) == 0 && !rawOut {
		if out, err = inferObject(outType, "Out", "structuredContent"); err != nil {
			return fmt.Errorf("add tool %q: %w (or make Out *server.ToolResult to build the result by hand)", t.Name, err)
		}
	} else if !rawOut {
		if err := decodesObject(outType, "Out"); err != nil {
			return fmt.Errorf("add tool %q: %w", t.Name, err)
		}
	}
	if o.RefineSchemas != nil {
		if in == nil && out == nil {
			return fmt.Errorf("add tool %q: RefineSchemas has nothing to refine: no schema was inferred", t.Name)
		}
		if err := refine(o.RefineSchemas, in, out); err != nil {
			return fmt.Errorf("add tool %q: refine schemas: %w", t.Name, err)
		}
	}
	if in != nil {
		if t.InputSchema, err = json.Marshal(in); err != nil {
			return fmt.Errorf("add tool %q: encode the inferred input schema: %w", t.Name, err)
		}
	}
	if out != nil {
		if t.OutputSchema, err = json.Marshal(out); err != nil {
			return fmt.Errorf("add tool %q: encode the inferred output schema: %w", t.Name, err)
		}
	}
	typed := &typedTool[In, Out]{name: t.Name, h: h, rawOut: rawOut, inFields: strictjson.FieldsOf(inType), log: s.log}
	return s.addTool(t, typed.handle, o)
}

// refine runs a RefineSchemas function, turning a panic (a nil map entry
// for a property that does not exist, say) into an error.
func refine(f func(in, out *jsonschema.Schema) error, in, out *jsonschema.Schema) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panicked: %v", p)
		}
	}()
	return f(in, out)
}

// inferObject infers the schema of an argument or result type, which must
// describe a JSON object: a struct, a pointer to one, or a map with string
// keys. A pointer's schema is its element's (the value is never null).
func inferObject(t reflect.Type, param, what string) (*jsonschema.Schema, error) {
	elem := t
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if !(elem.Kind() == reflect.Struct || elem.Kind() == reflect.Map && elem.Key().Kind() == reflect.String) {
		return nil, fmt.Errorf("%s is %v, but %s must be a JSON object: use a struct, a pointer to a struct or a map with string keys", param, t, what)
	}
	sch, err := jsonschema.ForType(elem, nil)
	if err != nil {
		return nil, fmt.Errorf("infer a schema from %s (%v): %w", param, t, err)
	}
	if sch.Type != "object" {
		return nil, fmt.Errorf("the schema inferred from %s (%v) has type %q, not \"object\"", param, t, sch.Type)
	}
	return sch, nil
}

// decodesObject checks that a type given a schema by hand can hold a JSON
// object.
func decodesObject(t reflect.Type, param string) error {
	elem := t
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	switch {
	case elem.Kind() == reflect.Struct, elem.Kind() == reflect.Interface,
		elem.Kind() == reflect.Map && elem.Key().Kind() == reflect.String:
		return nil
	}
	return fmt.Errorf("%s is %v, which cannot hold a JSON object: use a struct, a pointer to a struct, a map with string keys or an interface", param, t)
}

// typedTool adapts a ToolHandlerFor to a ToolHandler. The server has
// validated the arguments against the input schema before handle runs, and
// checks the structuredContent handle returns against the output schema.
type typedTool[In, Out any] struct {
	name     string
	h        ToolHandlerFor[In, Out]
	rawOut   bool               // Out is *ToolResult
	inFields *strictjson.Fields // In's keys, for the case check
	log      *slog.Logger
}

func (tt *typedTool[In, Out]) handle(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
	var in In
	if res := tt.decode(req, &in); res != nil {
		return res, nil
	}
	out, err := tt.h(ctx, req, in)
	if err != nil {
		return nil, err
	}
	if tt.rawOut {
		return any(out).(*ToolResult), nil
	}
	return tt.result(out)
}

// decode decodes a call's arguments into in, or returns the result that
// refuses them. It and result are out of line so that handle's frame,
// under the tool's handler on every call's stack, holds little more than
// in (issue 23: a call within the 8 KiB stack net/http starts a
// connection's goroutine with).
//
//go:noinline
func (tt *typedTool[In, Out]) decode(req *ToolRequest, in *In) *ToolResult {
	if err := strictjson.Unmarshal(req.Arguments, in); err != nil {
		return ErrorResult("invalid arguments: " + describeUnmarshal(err))
	}
	if err := tt.inFields.Check(req.Arguments); err != nil {
		return ErrorResult("invalid arguments: " + err.Error())
	}
	return nil
}

// result is the result of a handler that returned out (see decode).
//
//go:noinline
func (tt *typedTool[In, Out]) result(out Out) (*ToolResult, error) {
	b, err := json.Marshal(out)
	if err != nil {
		return nil, tt.internal("its result could not be encoded", err)
	}
	if string(b) == "null" {
		return nil, tt.internal("it returned no result", errors.New("nil Out and nil error"))
	}
	return &ToolResult{Content: []mcp.Block{mcp.Text(string(b))}, StructuredContent: json.RawMessage(b)}, nil
}

// internal logs why a typed tool's result cannot be sent and returns the
// -32603 the client gets instead.
func (tt *typedTool[In, Out]) internal(what string, err error) *mcp.Error {
	tt.log.Error("typed tool failed", "tool", tt.name, "problem", what, "err", err)
	return &mcp.Error{Code: mcp.InternalError, Message: fmt.Sprintf("Internal error: tool %q failed: %s", tt.name, what)}
}
