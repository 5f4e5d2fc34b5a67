// Package elicit is Baton's elicitation vocabulary: what a server can ask a
// user through the client, and how it checks what comes back.
//
// It covers form and URL requests, flat schemas, answers and their
// validation, as defined by the MCP 2026-07-28 specification
// (elicitation/create, ElicitResult):
//
//   - A [Request] is the params object of elicitation/create. [NewForm]
//     builds a form-mode request from [Field] builders ([String], [Number],
//     [Integer], [Boolean], [Enum], [TitledEnum], [MultiEnum],
//     [TitledMultiEnum], [LegacyEnum]); [NewURL] builds a URL-mode request.
//     [Request.Digest] fingerprints the exact question so that an answer
//     can be bound to it (for example inside an integrity-protected
//     requestState).
//   - A [Schema] is the restricted, flat JSON Schema a form may carry:
//     primitive properties, single and multi selects, and nothing nested.
//     [Schema.UnmarshalJSON] rejects anything the
//     specification does not allow, and property order is preserved.
//   - A [Result] is the client's answer: accept, decline or cancel.
//     [Request.CheckResult] checks its shape and validates
//     accepted form content against the schema that was sent, reporting
//     each problem as a [*ValidationError] naming the property.
//
// Decline and cancel are ordinary outcomes, not errors, and are never
// validated. For URL mode, accept means only that the user consented to
// open the URL; completion must be decided later (on the MRTR retry).
//
// Form mode must never be used to ask for secrets such as passwords, API
// keys, tokens or payment data; use URL mode for those.
//
// This package does no I/O and holds no package-level mutable state; a
// [Schema] compiles its validator once, on first use, and is safe for
// concurrent use afterwards.
package elicit
