package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server/internal/seal"
)

// MethodRequest is what middleware sees of a request.
type MethodRequest struct {
	// ID is the request's JSON-RPC id.
	ID mcp.ID
	// Method is the JSON-RPC method.
	Method string
	// Target is the tool or prompt name (tools/call, prompts/get), the
	// resource URI (resources/read), the task id (tasks/*), or "".
	Target string
	// Round is the attempt of a tools/call, prompts/get or resources/read:
	// 1 for a first attempt, n for the n-th round of a multi round-trip
	// exchange (read from the verified requestState; a state that fails
	// verification leaves it 0 and the request is refused). It is 0 for
	// other methods.
	Round int
	// Principal is the authenticated subject (PrincipalFromContext),
	// or "" when anonymous.
	Principal string
	// Meta is the request's envelope: protocol version, client
	// capabilities and info, log level, progress token. For a 2025-11-25
	// session it is what the session negotiated.
	Meta RequestMeta
	// Legacy reports a request of a 2025-11-25 (or earlier) session.
	Legacy bool

	srv *Server  // for LogRequests: the server's clock and logger
	r   *request // for Telemetry: the trace context, the flow
}

// MethodResult is what middleware sees of a request's resultNote when it
// produced a result (failures are errors).
type MethodResult struct {
	// InputRequired reports that the call ended its round with an
	// input_required result (on a 2025-11-25 session, one the bridge
	// serves).
	InputRequired bool
	// Task reports that the call was answered with a task.
	Task bool
	// IsError reports a tool result with isError set: a tool execution
	// failure the model sees, not a protocol error.
	IsError bool
}

// MethodHandler serves one request: the server's own handling, or the
// next middleware. A protocol error is returned as a *mcp.Error.
type MethodHandler func(ctx context.Context, req *MethodRequest) (*MethodResult, error)

// Middleware wraps the handling of every request the server handles, in
// both eras: server/discover, the lists, tools/call, prompts/get,
// resources/read, completion/complete, subscriptions/listen, tasks/*, the
// methods of extensions (Server.AddExtension), and
// a 2025-11-25 session's own methods (ping, logging/setLevel,
// resources/subscribe and unsubscribe). It runs after the envelope is
// decoded and checked and, for a call that resumes one, after the
// requestState is verified (so Round is known), before anything else.
//
// A middleware calls next to go on, and may refuse instead by returning an
// error: a *mcp.Error (or an error with an RPCError method) is sent as
// it is; any other error is logged and answered -32603 with a generic
// message. It may look at what next returned, and must return it (or an
// error) unchanged in meaning. For subscriptions/listen, next returns when
// the stream ends.
type Middleware func(next MethodHandler) MethodHandler

// resultNote is what the server's own handling noted of a result, for
// middleware.
type resultNote struct {
	inputRequired, task, isError bool

	flow seal.FlowID // the flow an input_required result continues
}

// intercept runs serve through the middleware chain, with mr describing
// the request. Without middleware it calls serve directly.
func (s *Server) intercept(ctx context.Context, mr *MethodRequest, serve func(ctx context.Context) (json []byte, out resultNote, e *mcp.Error)) ([]byte, *mcp.Error) {
	if s.tel != nil {
		return s.traced(ctx, mr, serve)
	}
	return s.chain(ctx, mr, serve)
}

// chain runs serve through the middleware.
func (s *Server) chain(ctx context.Context, mr *MethodRequest, serve func(ctx context.Context) (json []byte, out resultNote, e *mcp.Error)) ([]byte, *mcp.Error) {
	if len(s.opts.Middleware) == 0 {
		res, _, e := serve(ctx)
		return res, e
	}
	var (
		res    []byte
		served *mcp.Error
	)
	h := MethodHandler(func(ctx context.Context, _ *MethodRequest) (*MethodResult, error) {
		var out resultNote
		res, out, served = serve(ctx)
		if served != nil {
			return nil, served
		}
		return &MethodResult{InputRequired: out.inputRequired, Task: out.task, IsError: out.isError}, nil
	})
	for i := len(s.opts.Middleware) - 1; i >= 0; i-- {
		h = s.opts.Middleware[i](h)
	}
	_, err := h(ctx, mr)
	switch {
	case err == nil:
		if res == nil && served == nil {
			// A middleware answered without calling next: nothing to send
			// but a result it cannot build. Refuse rather than invent one.
			s.log.Error("middleware returned no error without calling the handler", "method", mr.Method)
			return nil, &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the request was not handled"}
		}
		return res, nil
	case served != nil && errors.Is(err, served):
		return nil, served // the server's own error (errNoResponse included, by identity)
	}
	if e, ok := asRPCError(err); ok {
		return nil, e
	}
	return nil, &mcp.Error{Code: mcp.InternalError, Message: s.internalText("middleware", err)}
}

// methodRequest describes r for middleware. For a call that carries a
// requestState it verifies the state now (the first work on anything the
// request carries beyond the linear pre-scan) so that Round is known, and
// keeps it for openRound.
func (s *Server) methodRequest(ctx context.Context, r *request) *MethodRequest {
	mr := &MethodRequest{ID: r.id, Method: r.method, Principal: PrincipalFromContext(ctx), Meta: r.meta, Legacy: r.legacy, srv: s, r: r}
	switch r.method {
	case "tools/call", "prompts/get":
		if r.p.Name != nil {
			mr.Target = *r.p.Name
		}
	case "resources/read":
		if r.p.URI != nil {
			mr.Target = *r.p.URI
		}
	default:
		mr.Target, _ = s.extensionTarget(r)
	}
	switch r.method {
	case "tools/call", "prompts/get", "resources/read":
		mr.Round = 1
		if r.p.RequestState != nil {
			_, _ = s.openState(r) // kept in r for the call's openRound
		}
		switch {
		case r.openErr != nil:
			mr.Round = 0
		case r.opened != nil:
			mr.Round = r.opened.Round + 1
		}
	}
	return mr
}

// openState verifies the request's requestState, once.
func (s *Server) openState(r *request) (*seal.State, error) {
	if r.opened == nil && r.openErr == nil {
		s.keyNeeded()
		r.opened, r.openErr = s.sealer.Open(*r.p.RequestState)
	}
	return r.opened, r.openErr
}

// LogRequests returns middleware that logs every request when it ends, on
// logger (the server's Logger when nil): the method, target, round,
// principal, protocol version, the resultNote (complete, input_required,
// task, tool_error, or the JSON-RPC error code) and the duration. Refused
// requests log at warning level, server errors (-32603) at error level,
// the rest at level.
func LogRequests(logger *slog.Logger, level slog.Level) Middleware {
	return func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
			// The server's clock (its Options.Now) times the request; a
			// MethodRequest made elsewhere is logged untimed.
			var now func() time.Time
			l := logger
			if req.srv != nil {
				now = req.srv.now
				if l == nil {
					l = req.srv.log
				}
			}
			if l == nil {
				l = slog.Default()
			}
			var start time.Time
			if now != nil {
				start = now()
			}
			res, err := next(ctx, req)
			attrs := []slog.Attr{slog.String("method", req.Method)}
			if now != nil {
				attrs = append(attrs, slog.Duration("took", now().Sub(start)))
			}
			if req.Target != "" {
				attrs = append(attrs, slog.String("target", clip.String(req.Target)))
			}
			if req.Round > 0 {
				attrs = append(attrs, slog.Int("round", req.Round))
			}
			if req.Principal != "" {
				attrs = append(attrs, slog.String("principal", clip.String(req.Principal)))
			}
			attrs = append(attrs, slog.String("protocol", req.Meta.ProtocolVersion))
			attrs = logTraceAttrs(ctx, req.srv, attrs)
			lvl := level
			switch {
			case err != nil:
				code := mcp.InternalError
				if e, ok := mcp.AsError(err); ok {
					code = e.Code
				}
				if e, ok := mcp.AsError(err); ok && e == errNoResponse {
					attrs = append(attrs, slog.String("outcome", "cancelled"))
				} else {
					attrs = append(attrs, slog.String("outcome", "error"), slog.Int("code", code))
					lvl = slog.LevelWarn
					if code == mcp.InternalError {
						lvl = slog.LevelError
					}
				}
			case res.InputRequired:
				attrs = append(attrs, slog.String("outcome", "input_required"))
			case res.Task:
				attrs = append(attrs, slog.String("outcome", "task"))
			case res.IsError:
				attrs = append(attrs, slog.String("outcome", "tool_error"))
			default:
				attrs = append(attrs, slog.String("outcome", "complete"))
			}
			l.LogAttrs(ctx, lvl, "mcp request", attrs...)
			return res, err
		}
	}
}
