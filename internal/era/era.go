// Package era is the contract between package server (the modern,
// stateless protocol and the transports) and package legacy (2025-11-25
// sessions). It is internal: users configure legacy support with
// server.Options.Legacy and never see these types.
//
// The two packages meet in two directions. Server routes to the adapter
// the requests that belong to a legacy session (HTTP POST, GET and DELETE,
// and a stdio process whose client sent initialize); the adapter hands the
// session's tool, prompt, resource and completion requests back to the
// server's dispatch with the session's envelope and a Peer for blocking
// client calls. server.New binds the two once, with Adapter.Bind.
//
// Type parameters keep the package below server: S is *server.Server and M
// is server.RequestMeta, so neither package needs to convert anything.
package era

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// Adapter serves legacy clients on a server's endpoint and process.
type Adapter[S, M any] interface {
	// Bind is called once, by server.New, before anything is served: srv
	// is the server and d dispatches the session's requests to it. Binding
	// an adapter a second time is an error.
	Bind(srv S, d Dispatcher[M]) error
	// Versions lists the legacy protocol versions served, newest first.
	Versions() []string
	// ServeLegacy serves an HTTP request routed to the legacy era: an
	// initialize without a modern envelope, or any request carrying an
	// Mcp-Session-Id. body and msg are the already-read body and its
	// decoded message; both are nil for GET and DELETE.
	ServeLegacy(w http.ResponseWriter, r *http.Request, body []byte, msg *rpcwire.Message)
	// ServeLegacyDecoded is ServeLegacy for a POSTed request whose params
	// the server decoded while it read the body (decoded, opaque to the
	// adapter): the adapter hands decoded back as Request.Decoded on the
	// request's first dispatch, so the params are not decoded twice.
	ServeLegacyDecoded(w http.ResponseWriter, r *http.Request, body []byte, msg *rpcwire.Message, decoded any)
	// NewStdioSession returns the session a stdio process becomes once its
	// client sends initialize.
	NewStdioSession(ctx context.Context) StdioSession
	// Shutdown stops taking new sessions (initialize is answered 503
	// with Retry-After) and waits until the calls in progress on this
	// instance have ended, or ctx ends (it then returns an error wrapping
	// ctx's). server.Server.Shutdown calls it, then Close.
	Shutdown(ctx context.Context) error
	// Close ends every session; server.Server.Close calls it.
	Close()
}

// StdioSession is one legacy client on stdio.
type StdioSession interface {
	// HandleMessage handles one message of the session; write sends a
	// line to the client.
	HandleMessage(ctx context.Context, msg *rpcwire.Message, write func([]byte) error)
	// Close ends the session at end of input.
	Close()
}

// ErrParked is wrapped by the error a Peer's Request returns once the
// call has parked (it waits for its client as a record): the handler
// returns it, and the dispatch ends without a response (ErrNoResponse),
// quietly.
var ErrParked = errors.New("the call waits for its client's answer as its record")

// ErrNoResponse is returned (by identity) by the dispatch for a request
// that must not be answered: it was cancelled, or its stream is gone.
var ErrNoResponse = &mcp.Error{Code: mcp.RequestCancelled, Message: "request cancelled"}

// Dispatcher runs a legacy session's request on the server.
type Dispatcher[M any] interface {
	// Dispatch runs one request of the methods handlers serve (tools,
	// prompts, resources, completion). It returns ErrNoResponse's error by
	// identity when the request was cancelled and must not be answered.
	// It does not keep r. The Outcome is returned by value: one
	// allocation fewer per request.
	Dispatch(ctx context.Context, r *Request[M]) (Outcome, *mcp.Error)
	// Intercept runs serve, a request the session answers itself (ping,
	// logging/setLevel, resources/subscribe and unsubscribe), through the
	// server's middleware.
	Intercept(ctx context.Context, r *Request[M], serve func(context.Context) (json.RawMessage, *mcp.Error)) (json.RawMessage, *mcp.Error)
	// Measure reports one of the adapter's measurements to the server's
	// telemetry (it does nothing without).
	Measure(ctx context.Context, m Measure, delta int64)
	// Refused reports a request the adapter refused for load or by a
	// quota (HTTP status 429 or 503): the server logs it (rate-limited)
	// and counts it in its telemetry under the limit's name.
	Refused(ctx context.Context, limit string, status int, retry time.Duration)
	// StoreTimeout is the server's Options.StoreTimeout (always set): the
	// deadline of each store call the adapter makes for a request.
	StoreTimeout() time.Duration
	// Watch calls f for every change of the tool, prompt or resource
	// lists and every resource update (local, or from the fan-out), until
	// the returned stop function is called.
	//
	// f runs on a goroutine of its own, outside every lock of the server,
	// and never concurrently with itself: it gets the changes one at a
	// time, in the order they were published, except that a change equal
	// to one still waiting for f is not queued twice. A slow or blocked f
	// delays only itself: whoever made the change, other watchers and
	// subscriptions/listen streams never wait for it, and what waits for
	// it is bounded by the distinct changes. f may call the server, its
	// own stop included; a panic in f is logged and costs that change
	// only.
	//
	// stop may be called from any goroutine, from f, and more than once.
	// It drops the changes still queued and does not wait for f: after
	// stop returns f is handed no other change, but a call that had
	// already taken its change when stop was called may still be running
	// (or just starting).
	Watch(f func(Change)) (stop func())
	// Capabilities returns what the server advertises now: tools,
	// prompts and resources while any are registered, completions when a
	// handler is set, logging when the server's Options.Logging is on, and
	// the extensions offered to 2025-11-25 clients.
	Capabilities() ServerCapabilities
	// Instructions is the server's Options.Instructions.
	Instructions() string
	// Logger is the server's logger, rate-limited per message.
	Logger() *slog.Logger
}

// Measure names a measurement of the adapter.
type Measure int

// The adapter's measurements.
const (
	// MeasureSessions: a session was taken up (+1) or let go (-1) here.
	MeasureSessions Measure = iota + 1
	// MeasureReplySent: a client's answer went to the instance holding
	// the call.
	MeasureReplySent
	// MeasureReplyReceived: a client's answer arrived from another
	// instance.
	MeasureReplyReceived
)

// Request is a legacy session's request for the server's dispatch.
type Request[M any] struct {
	// ID is the request's JSON-RPC id.
	ID mcp.ID
	// Method is the request's method.
	Method string
	// Params are the method's params; their _meta is not required, and a
	// progressToken in it is read when Meta has none.
	Params json.RawMessage
	// Meta is what a modern envelope would declare: the negotiated
	// version, the capabilities from initialize, the client's info and the
	// level from logging/setLevel.
	Meta M
	// Notifier receives the request's notifications.
	Notifier Notifier
	// Peer sends server-to-client requests for its blocking client calls.
	Peer Peer
	// SessionID is the session's id, for telemetry.
	SessionID string
	// Decoded is what the server handed ServeLegacyDecoded for this
	// request, given back only with the Params it decoded (the first
	// dispatch), else nil. The server reads its decoding of Params from
	// it instead of decoding them again.
	Decoded any
}

// Outcome is what a dispatched request produced: an encoded result, or,
// for a handler that suspended (Call.Suspend), the sealed state to resume
// with: the adapter dispatches the request again with params carrying
// requestState. (A legacy request's questions are real round trips over
// its Peer, so a suspension never carries questions.)
type Outcome struct {
	// Result is the encoded result, when the handler completed.
	Result json.RawMessage
	// Response, when set, is the whole JSON-RPC response to the request
	// with Result as its result, which the server wrote in one buffer:
	// the adapter sends it as is.
	Response []byte
	// RequestState is the sealed state of a suspended handler.
	RequestState string
	// Suspended reports whether the handler suspended (Result is then
	// empty).
	Suspended bool
}

// Notifier sends the notifications that belong to one request.
type Notifier interface {
	// Notify sends one notification on the request's stream.
	Notify(ctx context.Context, method string, params any) error
}

// PeerRequest is one server-to-client request.
type PeerRequest struct {
	// Method is the request's method, such as "elicitation/create".
	Method string
	// Params are the request's params, encoded with encoding/json.
	Params any
}

// Peer sends server-to-client requests for one call of a legacy session:
// each travels on the stream of the client request that caused it
// (SEP-2260). It is safe for concurrent use.
type Peer interface {
	// Request sends the requests to the client at once and waits for all
	// their answers, in order. A zero timeout means the session's default.
	// On expiry the peer cancels the outstanding requests with the client
	// and returns an error wrapping the server's ErrTimeout; when ctx ends
	// first it returns an error wrapping ctx's cause; a client's error
	// answer is a *server.ClientError. stay says the handler must not
	// run twice (server.RunsOnce): the call waits in place. Otherwise a
	// call whose answers are slow to come may park (its question waits as
	// a record in the session store), and Request then returns an error
	// wrapping mrtr.ErrInputRequired: the handler returns, and runs again
	// from the top, on the instance that gets the answers.
	Request(ctx context.Context, reqs []PeerRequest, timeout time.Duration, stay bool) ([]json.RawMessage, error)
	// Notify sends a notification that belongs to the call, or to the
	// session once the call's stream has closed.
	Notify(ctx context.Context, method string, params any) error
}
