package server

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-mcp/baton/mcp"
)

// A RegisterOption tunes how a tool, prompt or resource is served. Pass
// options to AddTool (both forms), AddPrompt, AddResource and
// AddResourceTemplate; each option says what it applies to, and one given
// where it does not apply makes the Add call fail, never silently ignored.
type RegisterOption struct {
	name  string
	kinds regKind
	apply func(*regOptions)
}

// regKind is a set of registration kinds.
type regKind uint8

const (
	forTool regKind = 1 << iota // Server.AddTool
	forTypedTool
	forPrompt
	forResource // AddResource and AddResourceTemplate
	forTools    = forTool | forTypedTool
	forAll      = forTools | forPrompt | forResource
)

// regOptions are the options of one registration.
type regOptions struct {
	AnswersWithoutState bool
	SkipInputValidation bool
	Requires            mcp.ClientCapabilities
	Task                TaskSupport
	DeferTask           bool
	RefineSchemas       func(in, out *jsonschema.Schema) error
}

// collectOptions applies opts for a registration of kind what, named for
// errors.
func collectOptions(kind regKind, what string, opts []RegisterOption) (regOptions, error) {
	var o regOptions
	for _, opt := range opts {
		if opt.apply == nil {
			return o, fmt.Errorf("%s: a zero RegisterOption (use the functions that return one)", what)
		}
		if opt.kinds&kind == 0 {
			return o, fmt.Errorf("%s: option %s does not apply here (it applies to %s)", what, opt.name, opt.kinds)
		}
		opt.apply(&o)
	}
	return o, nil
}

func (k regKind) String() string {
	var parts []string
	switch {
	case k&forTools == forTools:
		parts = append(parts, "tools")
	case k&forTypedTool != 0:
		parts = append(parts, "typed tools (the package-level AddTool)")
	case k&forTool != 0:
		parts = append(parts, "Server.AddTool")
	}
	if k&forPrompt != 0 {
		parts = append(parts, "prompts")
	}
	if k&forResource != 0 {
		parts = append(parts, "resources and resource templates")
	}
	return strings.Join(parts, ", ")
}

// AnswersWithoutState lets a retry that carries inputResponses but no
// requestState answer the handler's questions, matched by key alone. By
// default such answers are ignored and the question asked again, so only
// answers to questions a verified state issued reach the handler. Use it
// only where an answer grants nothing a client could not get by answering
// when asked. It applies to tools, prompts and resources.
func AnswersWithoutState() RegisterOption {
	return RegisterOption{name: "AnswersWithoutState", kinds: forAll, apply: func(o *regOptions) { o.AnswersWithoutState = true }}
}

// SkipInputValidation turns off validating a tool's arguments against its
// input schema. It applies to tools.
func SkipInputValidation() RegisterOption {
	return RegisterOption{name: "SkipInputValidation", kinds: forTools, apply: func(o *regOptions) { o.SkipInputValidation = true }}
}

// RequireCapabilities lists client capabilities a tool cannot work
// without: a call that does not declare them is refused with -32021 (and
// their list) before the handler runs, and on HTTP with status 400 before
// anything is streamed. It applies to tools.
func RequireCapabilities(c mcp.ClientCapabilities) RegisterOption {
	return RegisterOption{name: "RequireCapabilities", kinds: forTools, apply: func(o *regOptions) { o.Requires = c }}
}

// RunAsTask says whether calls of a tool may run as tasks (the tasks
// extension, SEP-2663): with TaskOptional or TaskRequired the server
// advertises the extension, and a call that declares it is answered with
// a task (see StartTask and Options.Tasks). The handler is the same code
// either way. It applies to tools.
func RunAsTask(s TaskSupport) RegisterOption {
	return RegisterOption{name: "RunAsTask", kinds: forTools, apply: func(o *regOptions) { o.Task = s }}
}

// DeferTask, with RunAsTask, lets the handler decide when the call becomes
// a task: until it calls StartTask the call is an ordinary one (it may ask
// its questions over input_required rounds first, as SEP-2663 recommends,
// or answer at once). Without it the task starts before the handler runs.
// It applies to tools.
func DeferTask() RegisterOption {
	return RegisterOption{name: "DeferTask", kinds: forTools, apply: func(o *regOptions) { o.DeferTask = true }}
}

// RefineSchemas edits the schemas a typed tool (the package-level
// AddTool) inferred from its Go types before they are compiled and
// published: enums, formats, bounds, patterns, examples, anything a struct
// tag cannot say (jsonschema-go's tag carries a description only). A
// function over the inferred *jsonschema.Schema, rather than a schema
// written out by hand or a tag mini-language, keeps the Go type the one
// source of the schema's shape, reaches every keyword, and is checked when
// the tool is added: the refined schemas are compiled right after, and an
// error f returns fails the registration. in or out is nil when that
// schema was not inferred (set in Tool, or Out is *ToolResult). It applies
// to typed tools only.
func RefineSchemas(f func(in, out *jsonschema.Schema) error) RegisterOption {
	return RegisterOption{name: "RefineSchemas", kinds: forTypedTool, apply: func(o *regOptions) { o.RefineSchemas = f }}
}
