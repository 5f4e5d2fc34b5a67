package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// Dispatch runs one request of a legacy session: tools/list, tools/call,
// prompts/list, prompts/get, resources/list, resources/templates/list,
// resources/read and completion/complete, with results in the 2025-11-25
// form. It returns errNoResponse, by identity, when the request was
// cancelled and must not be answered.
func (d legacyDispatcher) Dispatch(ctx context.Context, lr *era.Request[RequestMeta]) (era.Outcome, *mcp.Error) {
	s := d.s
	r, e := d.request(lr)
	if e != nil {
		return era.Outcome{}, e
	}
	var n notifier
	if lr.Notifier != nil {
		n = lr.Notifier
	}
	res, e := s.handle(ctx, r, n)
	if e != nil {
		return era.Outcome{}, e
	}
	if irr := r.suspended; irr != nil {
		return era.Outcome{Suspended: true, RequestState: irr.RequestState}, nil
	}
	return era.Outcome{Result: res, Response: legacyFrame(r, res)}, nil
}

// request is Dispatch's request for lr: decodeLegacy's (lr.Decoded) or
// one decoded here, with the session's part set. It is out of line so
// that Dispatch's frame, under every call of a session, stays small (see
// prepareToolCall).
//
//go:noinline
func (d legacyDispatcher) request(lr *era.Request[RequestMeta]) (*request, *mcp.Error) {
	s := d.s
	r, decoded := lr.Decoded.(*request) // decodeLegacy's: id, method and params decoded
	if decoded {
		r.meta, r.legacy, r.peer, r.session, r.raw = lr.Meta, true, lr.Peer, lr.SessionID, lr.Params
	} else {
		r = &request{id: lr.ID, method: lr.Method, meta: lr.Meta, legacy: true, peer: lr.Peer, session: lr.SessionID, raw: lr.Params}
	}
	if lr.Peer != nil && s.tel != nil {
		r.peer = tracedPeer{Peer: lr.Peer, s: s}
	}
	if t := bytes.TrimSpace(lr.Params); len(t) > 0 && !bytes.Equal(t, []byte("null")) && !decoded {
		if err := strictjson.Unmarshal(t, &r.p); err != nil {
			return nil, invalidParams("%v", describeUnmarshal(err))
		}
	}
	if r.meta.ProgressToken == nil && r.p.Meta != nil {
		if tok := bytes.TrimSpace(r.p.Meta.ProgressToken); len(tok) > 0 && !bytes.Equal(tok, []byte("null")) {
			var id mcp.ID
			if err := id.UnmarshalJSON(tok); err != nil {
				return nil, invalidParams("progressToken must be a string or an integer")
			}
			r.meta.ProgressToken = id.Raw()
		}
	}
	switch lr.Method {
	case "server/discover", "subscriptions/listen":
		return nil, methodNotFound(lr.Method)
	}
	return r, nil
}

// Watch is the server's hub watch (era.Dispatcher.Watch).
func (d legacyDispatcher) Watch(f func(era.Change)) (stop func()) { return d.s.hub.watch(f) }

// Capabilities is what a 2025-11-25 initialize advertises.
func (d legacyDispatcher) Capabilities() era.ServerCapabilities { return d.s.capabilities() }

// Instructions is Options.Instructions.
func (d legacyDispatcher) Instructions() string { return d.s.opts.Instructions }

// Logger is the server's rate-limited logger.
func (d legacyDispatcher) Logger() *slog.Logger { return d.s.log }

// Intercept runs a legacy session's own request through the middleware.
func (d legacyDispatcher) Intercept(ctx context.Context, lr *era.Request[RequestMeta], serve func(context.Context) (json.RawMessage, *mcp.Error)) (json.RawMessage, *mcp.Error) {
	r := &request{id: lr.ID, method: lr.Method, meta: lr.Meta, legacy: true, session: lr.SessionID}
	return d.s.intercept(ctx, d.s.methodRequest(ctx, r), func(ctx context.Context) ([]byte, resultNote, *mcp.Error) {
		res, e := serve(ctx)
		return res, resultNote{}, e
	})
}

// Refused reports a request the legacy adapter refused for load or by a
// quota.
func (d legacyDispatcher) Refused(ctx context.Context, limit string, status int, retry time.Duration) {
	d.s.refused(ctx, limit, status, retry)
}

// Measure reports the legacy adapter's measurements.
func (d legacyDispatcher) Measure(ctx context.Context, m era.Measure, delta int64) {
	t := d.s.tel
	if t == nil {
		return
	}
	switch m {
	case era.MeasureSessions:
		t.Record(ctx, measurement{Kind: measureLegacySessions, Delta: delta})
	case era.MeasureReplySent:
		t.Record(ctx, measurement{Kind: measureAnswerRouted, Reason: "sent", Delta: delta})
	case era.MeasureReplyReceived:
		t.Record(ctx, measurement{Kind: measureAnswerRouted, Reason: "received", Delta: delta})
	}
}
