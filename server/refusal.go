package server

import (
	"context"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// Every refusal is seen: a request refused for load or by a quota (429,
// 503) is logged (the server's log is rate-limited per message, so a
// flood of refusals writes a line a second with the count of those it
// suppressed), counted in the telemetry under the limit's name
// (measureRefused), and explained in the JSON-RPC error's data as well
// as in Retry-After (rpcwire.Refusal), since clients read the body.

// The limit names of refusals that no option sets.
const (
	limitDraining = "draining" // the instance is shutting down
	limitStore    = "store"    // a store failed or missed its deadline
)

// withRefusal gives e the data of a refusal by limit, retried in a
// second.
func withRefusal(e *mcp.Error, limit string) *mcp.Error {
	e.Data = &rpcwire.Refusal{Limit: limit, RetryAfterSeconds: 1}
	return e
}

// refused logs and counts a refusal.
func (s *Server) refused(ctx context.Context, limit string, status int, retry time.Duration) {
	s.log.Warn("request refused by a limit", "limit", limit, "status", status, "retry_after_s", rpcwire.RetrySeconds(retry))
	s.record(ctx, measurement{Kind: measureRefused, Reason: limit})
}

// refusal gives e, an error that refuses a request with status and
// retry, the data that says so (unless it has data of its own), and logs
// and counts it. It returns the error to answer with.
func (s *Server) refusal(ctx context.Context, e *mcp.Error, limit string, status int, retry time.Duration) *mcp.Error {
	if e.Data == nil {
		e = &mcp.Error{Code: e.Code, Message: e.Message, Data: &rpcwire.Refusal{Limit: limit, RetryAfterSeconds: rpcwire.RetrySeconds(retry)}}
	} else if rf, ok := e.Data.(*rpcwire.Refusal); ok {
		limit = rf.Limit
	}
	s.refused(ctx, limit, status, retry)
	return e
}
