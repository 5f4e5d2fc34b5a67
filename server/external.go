package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mrtr"
)

// Era is the protocol era a request belongs to.
type Era int

const (
	// Modern is the stateless 2026-07-28 protocol.
	Modern Era = iota
	// Legacy is 2025-11-25 and earlier: results carry no resultType,
	// caching hints or serverInfo, and a handler's input_required result is
	// handed back to the caller to bridge instead of being encoded.
	Legacy
)

// Dispatch is a request handed to the server from outside its own HTTP
// and stdio paths: a legacy session, or an adapter such as a serverless
// function.
type Dispatch struct {
	ID     jsonrpc.ID
	Method string
	// Params are the method's params. Their _meta is not required; only a
	// progressToken in it is read (when Meta has none).
	Params json.RawMessage
	// Meta is what a modern envelope would declare: for a legacy session,
	// the negotiated version, the capabilities from initialize and the
	// level from logging/setLevel.
	Meta RequestMeta
	// Era selects the wire form of the result.
	Era Era
	// Notifier receives the request's notifications (may be nil).
	Notifier Notifier
	// Peer sends server-to-client requests for the request's blocking
	// client calls (may be nil).
	Peer Peer
	// Header, if set, is checked for Mcp-Param headers (modern HTTP).
	Header http.Header
}

// Outcome is what a dispatched request produced: an encoded result, or for
// a legacy request whose handler asked for input, the questions and the
// sealed state to bridge with (retry with params carrying inputResponses
// and requestState).
type Outcome struct {
	Result        json.RawMessage
	InputRequired *mrtr.InputRequiredResult
}

// Dispatch runs one request of the methods a handler serves: tools/list,
// tools/call, prompts/list, prompts/get, resources/list,
// resources/templates/list, resources/read and completion/complete (and
// server/discover for modern requests). It returns ErrNoResponse, by
// identity, when the request was cancelled and must not be answered.
func (s *Server) Dispatch(ctx context.Context, d *Dispatch) (*Outcome, *jsonrpc.Error) {
	r := &request{id: d.ID, method: d.Method, meta: d.Meta, header: d.Header, legacy: d.Era == Legacy, peer: d.Peer}
	if t := bytes.TrimSpace(d.Params); len(t) > 0 && !bytes.Equal(t, []byte("null")) {
		if err := strictjson.Unmarshal(t, &r.p); err != nil {
			return nil, invalidParams("%v", describeUnmarshal(err))
		}
	}
	if r.meta.ProgressToken == nil && r.p.Meta != nil {
		if tok := bytes.TrimSpace(r.p.Meta.ProgressToken); len(tok) > 0 && !bytes.Equal(tok, []byte("null")) {
			var id jsonrpc.ID
			if err := id.UnmarshalJSON(tok); err != nil {
				return nil, invalidParams("progressToken must be a string or an integer")
			}
			r.meta.ProgressToken = id.Raw()
		}
	}
	switch d.Method {
	case "server/discover", "subscriptions/listen":
		if r.legacy || d.Method == "subscriptions/listen" {
			return nil, methodNotFound(d.Method)
		}
	}
	res, e := s.handle(ctx, r, d.Notifier)
	if e != nil {
		return nil, e
	}
	return &Outcome{Result: res, InputRequired: r.suspended}, nil
}

// Watch calls f for every change of the tool, prompt or resource lists and
// every resource update (local, or from the fan-out), until the returned
// stop function is called.
//
// f runs on a goroutine of its own, outside every lock of the server, and
// never concurrently with itself: it gets the changes one at a time, in the
// order they were published, except that a change equal to one still
// waiting for f is not queued twice. A slow or blocked f delays only
// itself: whoever made the change, other watchers and subscriptions/listen
// streams never wait for it, and what waits for it is bounded by the
// distinct changes. f may call the server, its own stop included; a panic
// in f is logged and costs that change only.
//
// stop may be called from any goroutine, from f, and more than once. It
// drops the changes still queued and does not wait for f: after stop
// returns f is handed no other change, but a call that had already taken
// its change when stop was called may still be running (or just starting).
func (s *Server) Watch(f func(Change)) (stop func()) {
	return s.hub.watch(f)
}

// Instructions returns Options.Instructions.
func (s *Server) Instructions() string { return s.opts.Instructions }

// Logger returns the server's logger: Options.Logger, rate-limited per
// message (see Options.Logger).
func (s *Server) Logger() *slog.Logger { return s.log }
