package elicit

import (
	"errors"
	"fmt"

	"github.com/baton-mcp/baton/internal/clip"
)

// ErrNotAccepted is matched (errors.Is) by the error [Result.Decode]
// returns when the user did not accept the elicitation (the action is
// decline or cancel), so there is no content to decode. To tell the two
// apart, match [ErrDeclined] or [ErrCancelled].
var ErrNotAccepted = errors.New("elicit: result was not accepted")

// ErrDeclined is returned by [Result.Decode] when the user explicitly
// declined (action "decline"). It also matches [ErrNotAccepted].
var ErrDeclined error = &notAccepted{"elicit: the user declined (action \"decline\"): there is no content to decode"}

// ErrCancelled is returned by [Result.Decode] when the user dismissed the
// request without choosing (action "cancel"). It also matches
// [ErrNotAccepted].
var ErrCancelled error = &notAccepted{"elicit: the user cancelled (action \"cancel\"): there is no content to decode"}

// notAccepted is ErrDeclined or ErrCancelled: each is itself and
// ErrNotAccepted for errors.Is.
type notAccepted struct{ msg string }

func (e *notAccepted) Error() string { return e.msg }

// Is reports that the error is also ErrNotAccepted.
func (e *notAccepted) Is(target error) bool { return target == ErrNotAccepted }

// SchemaError reports a rule violation in a form schema, found while
// building it with the [Field] builders or while parsing it from JSON.
// Several may be joined into one error; use [errors.As] to reach the first.
type SchemaError struct {
	// Property is the name of the offending property, or "" when the
	// problem concerns the schema as a whole.
	Property string
	// Reason describes the violation.
	Reason string
}

// Error implements the error interface.
func (e *SchemaError) Error() string {
	if e.Property == "" {
		return "schema: " + e.Reason
	}
	return fmt.Sprintf("property %q: %s", e.Property, e.Reason)
}

// ValidationError reports why an answer's content does not satisfy the
// schema that was sent. Several may be joined into one error; use
// [errors.As] to reach the first, or walk the joined errors to collect all.
type ValidationError struct {
	// Field is the name of the offending property, or "" when the problem
	// concerns the content as a whole (for example, it is not an object).
	Field string
	// Keyword is the JSON Schema keyword that failed, such as "type",
	// "required", "enum", "format", "minimum" or "maxItems"; it is
	// "content" for values of a shape elicitation never allows.
	Keyword string
	// Reason is a human-readable explanation, suitable for showing to the
	// user when asking again.
	Reason string
}

// Error implements the error interface.
func (e *ValidationError) Error() string {
	if e.Field == "" {
		return "content: " + e.Reason
	}
	// The field may be any key the peer sent: echoed cut.
	return fmt.Sprintf("property %s: %s", clip.Quote(e.Field), e.Reason)
}
