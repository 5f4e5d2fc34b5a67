package rpcwire

import "time"

// Refusal is the "data" of the JSON-RPC error that refuses a request for
// load or by a quota (HTTP 429 or 503). Clients read the body, not the
// Retry-After header (neither official client looks at it), so the body
// says it too: which limit refused the request, and how many seconds to
// wait before trying again.
type Refusal struct {
	// Limit names the limit, by the option that sets it
	// (legacy.Options.MaxSessionsPerClient, …), or "draining" for an
	// instance that is shutting down and "store" for a store that failed.
	Limit string `json:"limit"`
	// RetryAfterSeconds is the Retry-After header's value.
	RetryAfterSeconds int64 `json:"retryAfterSeconds"`
}

// RetrySeconds rounds d up to whole seconds, at least 1: the Retry-After
// of a refusal.
func RetrySeconds(d time.Duration) int64 {
	return max(int64((d+time.Second-1)/time.Second), 1)
}
