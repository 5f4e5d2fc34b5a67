package server

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/baton-mcp/baton/mcp"
)

// TypedToolOption tunes a typed tool (the package-level AddTool). Every
// ToolOption is one; RefineSchemas is one only.
type TypedToolOption interface {
	applyTypedTool(*regOptions)
}

// ToolOption tunes a tool, of either form (Server.AddTool and the
// package-level AddTool).
type ToolOption interface {
	TypedToolOption
	applyTool(*regOptions)
}

// PromptOption tunes a prompt (AddPrompt).
type PromptOption interface {
	applyPrompt(*regOptions)
}

// ResourceOption tunes a resource or resource template (AddResource and
// AddResourceTemplate).
type ResourceOption interface {
	applyResource(*regOptions)
}

// Option tunes a registration of any kind.
//
// Registration options are checked by the compiler, one interface per
// kind of registration: an option that does not apply to a kind does not
// implement its interface, so giving it there does not compile.
//
//	Server.AddTool                          ToolOption
//	AddTool (typed, the package-level one)  TypedToolOption
//	AddPrompt                               PromptOption
//	AddResource, AddResourceTemplate        ResourceOption
//
// An Option is all of them; a ToolOption is a TypedToolOption too. For
// example, SkipInputValidation returns a ToolOption, so
//
//	srv.AddPrompt(p, h, server.SkipInputValidation())
//
// fails to compile: ToolOption does not implement PromptOption.
type Option interface {
	ToolOption
	PromptOption
	ResourceOption
}

// anyOption applies to every kind.
type anyOption func(*regOptions)

func (f anyOption) applyTypedTool(o *regOptions) { f(o) }
func (f anyOption) applyTool(o *regOptions)      { f(o) }
func (f anyOption) applyPrompt(o *regOptions)    { f(o) }
func (f anyOption) applyResource(o *regOptions)  { f(o) }

// toolOption applies to tools of both forms.
type toolOption func(*regOptions)

func (f toolOption) applyTypedTool(o *regOptions) { f(o) }
func (f toolOption) applyTool(o *regOptions)      { f(o) }

// typedToolOption applies to typed tools only.
type typedToolOption func(*regOptions)

func (f typedToolOption) applyTypedTool(o *regOptions) { f(o) }

// regOptions are the options of one registration.
type regOptions struct {
	AnswersWithoutState bool
	SkipInputValidation bool
	Requires            mcp.ClientCapabilities
	Task                TaskSupport
	DeferTask           bool
	RunsOnce            bool // RunsOnce
	TaskMayRerun        bool // TaskMayRerun
	RefineSchemas       func(in, out *jsonschema.Schema) error
	Scopes              []string // RequireScopes (authz.go)
}

// collectOptions applies opts for the registration what (named for
// errors) with apply. A nil option, which only a nil interface value can
// be, is an error.
func collectOptions[O comparable](what string, opts []O, apply func(O, *regOptions)) (regOptions, error) {
	var o regOptions
	var zero O
	for i, opt := range opts {
		if opt == zero {
			return o, fmt.Errorf("%s: option %d is nil", what, i+1)
		}
		apply(opt, &o)
	}
	if err := checkScopes(o.Scopes); err != nil {
		return o, fmt.Errorf("%s: %w", what, err)
	}
	return o, nil
}

// AnswersWithoutState lets a retry that carries inputResponses but no
// requestState answer the handler's questions, matched by key alone. By
// default such answers are ignored and the question asked again, so only
// answers to questions a verified state issued reach the handler. Use it
// only where an answer grants nothing a client could not get by answering
// when asked. It applies to tools, prompts and resources.
func AnswersWithoutState() Option {
	return anyOption(func(o *regOptions) { o.AnswersWithoutState = true })
}

// SkipInputValidation turns off validating a tool's arguments against its
// input schema. It applies to tools.
func SkipInputValidation() ToolOption {
	return toolOption(func(o *regOptions) { o.SkipInputValidation = true })
}

// RequireCapabilities lists client capabilities a tool, prompt or resource
// cannot work without: a request that does not declare them is refused
// with -32021 (and their list) before the handler runs, and on HTTP with
// status 400 before anything is streamed. It applies to every kind.
func RequireCapabilities(c mcp.ClientCapabilities) Option {
	return anyOption(func(o *regOptions) { o.Requires = c })
}

// RunAsTask says whether calls of a tool may run as tasks (the tasks
// extension, SEP-2663): with TaskOptional or TaskRequired the server
// advertises the extension, and a call that declares it is answered with
// a task (see StartTask and Options.Tasks). The handler is the same code
// either way. It applies to tools.
func RunAsTask(s TaskSupport) ToolOption {
	return toolOption(func(o *regOptions) { o.Task = s })
}

// DeferTask, with RunAsTask, lets the handler decide when the call becomes
// a task: until it calls StartTask the call is an ordinary one (it may ask
// its questions over input_required rounds first, as SEP-2663 recommends,
// or answer at once). Without it the task starts before the handler runs.
// It applies to tools.
func DeferTask() ToolOption {
	return toolOption(func(o *regOptions) { o.DeferTask = true })
}

// RunsOnce keeps the handler running once, for a handler whose code
// before its last question must not run twice. Without it a question
// does not keep the handler waiting: a task's question waits as the
// task's record, and a 2025-11-25 call's as a record in the session
// store once its resident window (legacy.Options.HoldFor) has passed;
// the answer, on any instance, runs the handler again from the top with
// the answers recorded so far, as 2026-07-28 rounds do. With it the
// question waits in place: the handler's goroutine (about two goroutines
// and 15 to 36 KiB) stays resident on the instance that runs it the whole
// time the person thinks, and the task or call fails if that instance
// dies or shuts down before the answer comes. DeferTask tasks always run
// once. It applies to tools.
func RunsOnce() ToolOption {
	return toolOption(func(o *regOptions) { o.RunsOnce = true })
}

// TaskMayRerun, with RunAsTask, lets another instance run a task's
// handler again from the top (with the answers recorded so far) when the
// instance running it dies or shuts down while it runs, instead of
// failing the task: at most 3 times, the task's statusMessage saying so.
// A tool whose annotations set idempotentHint gets it too. It conflicts
// with RunsOnce and DeferTask. It applies to tools.
func TaskMayRerun() ToolOption {
	return toolOption(func(o *regOptions) { o.TaskMayRerun = true })
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
func RefineSchemas(f func(in, out *jsonschema.Schema) error) TypedToolOption {
	return typedToolOption(func(o *regOptions) { o.RefineSchemas = f })
}
