package elicit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
)

// The elicitation modes of the 2026-07-28 specification.
const (
	// ModeForm asks for structured data through a form described by a
	// [Schema]. A request without a mode is a form request.
	ModeForm = "form"
	// ModeURL asks the user to open a URL for an out-of-band interaction
	// (sign-in, payment, entering a secret).
	ModeURL = "url"
)

// Request is the params object of an elicitation/create request, as placed
// in an MRTR inputRequests entry ({"method":"elicitation/create",
// "params": Request}).
//
// Build one with [NewForm] or [NewURL], or decode one from JSON and call
// [Request.Validate]. Unknown JSON fields (such as _meta) are ignored when
// decoding and take no part in [Request.Digest].
type Request struct {
	// Mode is ModeForm ("form") or ModeURL ("url"). Empty means form
	// mode, and is omitted.
	Mode string `json:"mode,omitempty"`
	// Message tells the user what is asked and why ("message", required).
	Message string `json:"message"`
	// RequestedSchema describes the form ("requestedSchema"; required in
	// form mode, omitted in URL mode).
	RequestedSchema *Schema `json:"requestedSchema,omitempty"`
	// URL is the page the user is asked to open ("url"; required in URL
	// mode, omitted in form mode).
	URL string `json:"url,omitempty"`
	// ElicitationID exists only for the legacy 2025-11-25 URL mode, where
	// it correlated notifications/elicitation/complete. Modern
	// (2026-07-28) servers MUST NOT set it: URL mode is exactly mode,
	// message and url, and correlation goes through requestState.
	ElicitationID string `json:"elicitationId,omitempty"`
}

// NewForm builds and validates a form-mode request. Fields appear in the
// form in the given order; see [NewSchema] for the rules enforced.
//
// Form mode must never ask for secrets (passwords, API keys, tokens,
// payment data); use [NewURL] for those.
func NewForm(message string, fields ...*Field) (*Request, error) {
	s, errs := buildSchema(fields)
	if len(errs) > 0 {
		return nil, fmt.Errorf("elicit: invalid form: %w", errors.Join(errs...))
	}
	r := &Request{Mode: ModeForm, Message: message, RequestedSchema: s}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// NewURL builds and validates a URL-mode request. rawURL must be an
// absolute http or https URL with a host and without user credentials.
// Use https outside development, and never put secrets, personal data or
// pre-authenticated tokens in the URL.
func NewURL(message, rawURL string) (*Request, error) {
	r := &Request{Mode: ModeURL, Message: message, URL: rawURL}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// mode returns the effective mode: empty means form.
func (r *Request) mode() string {
	if r.Mode == "" {
		return ModeForm
	}
	return r.Mode
}

// Validate checks a request built by hand or decoded from JSON:
//   - form mode (or no mode) needs a non-empty message and a
//     requestedSchema, and no url or elicitationId;
//   - URL mode needs a non-empty message and an absolute http(s) url, and
//     no requestedSchema. A legacy elicitationId is tolerated here (it is
//     valid on the 2025-11-25 path) but must not be sent by modern servers;
//   - any other mode is an error.
//
// A *Schema is valid by construction, so a decoded request whose schema
// breaks the rules already failed to decode.
func (r *Request) Validate() error {
	if r == nil {
		return errors.New("elicit: nil request")
	}
	if r.Message == "" {
		return errors.New("elicit: request needs a message")
	}
	switch r.mode() {
	case ModeForm:
		if r.RequestedSchema == nil {
			return errors.New("elicit: form request needs a requestedSchema")
		}
		if r.URL != "" {
			return errors.New("elicit: form request must not carry a url")
		}
		if r.ElicitationID != "" {
			return errors.New("elicit: form request must not carry an elicitationId")
		}
	case ModeURL:
		if r.RequestedSchema != nil {
			return errors.New("elicit: url request must not carry a requestedSchema")
		}
		if err := checkURL(r.URL); err != nil {
			return fmt.Errorf("elicit: url request: %w", err)
		}
	default:
		return fmt.Errorf("elicit: unknown elicitation mode %q (want %q or %q)", r.Mode, ModeForm, ModeURL)
	}
	return nil
}

func checkURL(raw string) error {
	if raw == "" {
		return errors.New("url is required")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("invalid url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url %q must be an absolute http or https URL", raw)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("url %q has no host", raw)
	}
	if u.User != nil {
		return fmt.Errorf("url %q must not embed user credentials", raw)
	}
	return nil
}

// Digest returns the SHA-256 of the request's canonical JSON encoding,
// with an absent mode normalised to "form". It is stable across runs,
// processes and a JSON round trip (decoding the wire form and encoding it
// again yields the same digest), so a server can bind an answer to the
// exact question asked, for example inside its requestState.
func (r *Request) Digest() [32]byte {
	if r == nil {
		return sha256.Sum256([]byte("null"))
	}
	// The schema (immutable, shared by every round's request) remembers
	// the last request's digest with the fields it covers; a request with
	// the same fields over the same schema has the same digest. Under
	// valgrind the two SHA-256 blocks this saves were about 6,000
	// instructions per question per round (BenchmarkCarried in bench/).
	var c *compiled
	if r.RequestedSchema != nil {
		c = r.RequestedSchema.cache
	}
	if c != nil {
		if e := c.last.Load(); e != nil && e.message == r.Message && sameString(e.mode, r.Mode) && sameString(e.url, r.URL) && sameString(e.elicitationID, r.ElicitationID) {
			return e.digest
		}
	}
	d := r.digest()
	if c != nil {
		c.last.Store(&requestDigest{mode: r.Mode, message: r.Message, url: r.URL, elicitationID: r.ElicitationID, digest: d})
	}
	return d
}

// sameString is a == b, without a call to compare two empty strings (a
// form's mode, URL and elicitationId usually are): Digest compares four
// strings once per question per round.
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || a == b)
}

// digest computes Digest.
func (r *Request) digest() [32]byte {
	// Length-prefixed fields, then the schema's own (cached) digest: no
	// encoding of the whole request on every call. The input is built in
	// a buffer on the stack and hashed in one call (no hash object on the
	// heap); the bytes hashed are the same as when they were streamed.
	var buf [256]byte
	b := buf[:0]
	field := func(s string) {
		b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
		b = append(b, s...)
	}
	field("elicit.Request/v1")
	field(r.mode())
	field(r.Message)
	field(r.URL)
	field(r.ElicitationID)
	if r.RequestedSchema != nil {
		_, d := r.RequestedSchema.wire()
		b = append(b, 1)
		b = append(b, d[:]...)
	} else {
		b = append(b, 0)
	}
	return sha256.Sum256(b)
}

// AppendJSON appends the request's wire encoding (the params of
// elicitation/create) to dst, using the schema's cached encoding.
func (r *Request) AppendJSON(dst []byte) []byte {
	if r == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '{')
	if r.Mode != "" {
		dst = append(dst, `"mode":`...)
		dst = appendString(dst, r.Mode)
		dst = append(dst, ',')
	}
	dst = append(dst, `"message":`...)
	dst = appendString(dst, r.Message)
	if r.RequestedSchema != nil {
		dst = append(dst, `,"requestedSchema":`...)
		dst = r.RequestedSchema.appendWire(dst)
	}
	if r.URL != "" {
		dst = append(dst, `,"url":`...)
		dst = appendString(dst, r.URL)
	}
	if r.ElicitationID != "" {
		dst = append(dst, `,"elicitationId":`...)
		dst = appendString(dst, r.ElicitationID)
	}
	return append(dst, '}')
}

// MarshalJSON writes the wire encoding (see AppendJSON).
func (r *Request) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// CheckedResult rebuilds the Result that CheckResult returned for this
// request from its action and content (Result.Content as CheckResult
// returned it), without parsing or validating them again: for an answer
// the caller has kept from tampering since it was checked (Baton's server
// keeps it in its sealed requestState). It grants nothing that building
// &Result{Action: action, Content: content} would not; Decode of the
// result reuses the schema's cached key tables, as after CheckResult,
// and relies on content holding only properties the schema defines (as
// CheckResult leaves it). For an answer from a client, use CheckResult.
func (r *Request) CheckedResult(action Action, content json.RawMessage) *Result {
	res := &Result{Action: action, Content: content}
	if r != nil && action == ActionAccept && r.RequestedSchema != nil {
		if r.RequestedSchema.cache != nil {
			res.schema = r.RequestedSchema
		}
	}
	return res
}

// CheckResult parses the client's ElicitResult for this request and, when
// it accepts a form, validates its content against RequestedSchema. An
// accepted form without content is checked as an empty object, so it
// fails if any property is required. Properties the schema does not define
// are ignored: they are removed from the returned Result's Content, so
// [Result.Decode] only ever sees validated values. An accepted URL request
// must carry no content. Decline and cancel are returned as they are,
// never validated.
//
// Content problems are reported as [*ValidationError] values, several
// joined in schema order; a malformed result yields a plain error.
func (r *Request) CheckResult(data []byte) (*Result, error) {
	if r == nil {
		return nil, errors.New("elicit: CheckResult on a nil request")
	}
	if res, ok := r.checkFast(data); ok {
		return res, nil
	}
	return r.checkResult(data)
}

// checkResult is CheckResult with every check: the answers checkFast
// cannot pass, and every refusal.
func (r *Request) checkResult(data []byte) (*Result, error) {
	res, doc, keys, err := parseResult(data)
	if err != nil {
		return nil, err
	}
	if res.Action != ActionAccept {
		return res, nil
	}
	switch r.mode() {
	case ModeForm:
		if r.RequestedSchema == nil {
			return nil, errors.New("elicit: form request has no requestedSchema to validate against")
		}
		if err := r.RequestedSchema.validateContentDoc(doc); err != nil {
			return nil, err
		}
		res.Content = r.RequestedSchema.keepDefined(res.Content, keys, doc)
		if r.RequestedSchema.cache != nil {
			res.schema = r.RequestedSchema
		}
	case ModeURL:
		if res.Content != nil {
			return nil, errors.New("elicit: an accepted url elicitation must not carry content")
		}
	default:
		return nil, fmt.Errorf("elicit: unknown elicitation mode %q", r.Mode)
	}
	return res, nil
}
