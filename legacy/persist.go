package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/mcp"
)

// maxSubscriptionBytes bounds the total length of a session's subscribed
// URIs, so that with Options.MaxSubscriptions it bounds what a session's
// record holds (every instance reads it on every request).
const maxSubscriptionBytes = 256 << 10

// errTooManySubscriptions is returned by a store update that would go
// over a subscription limit.
var errTooManySubscriptions = errors.New("too many subscriptions")

// subscribeURI returns the uri of a resources/subscribe or unsubscribe,
// or "" when its params have none (run refuses those).
func subscribeURI(msg *rpcwire.Message) string {
	var p struct {
		URI string `json:"uri"`
	}
	if strictjson.Unmarshal(msg.Params, &p) != nil {
		return ""
	}
	return p.URI
}

// fits reports whether subs, with uri added, keep within the limits.
func (h *adapter) fits(subs []string, uri string) bool {
	if slices.Contains(subs, uri) {
		return true
	}
	if max := h.opts.MaxSubscriptions; max > 0 && len(subs) >= max {
		return false
	}
	n := len(uri)
	for _, u := range subs {
		n += len(u)
	}
	return n <= maxSubscriptionBytes
}

func (h *adapter) tooManySubscriptions() *mcp.Error {
	if h.opts.MaxSubscriptions > 0 {
		return mcp.Errorf(mcp.InvalidParams, "Too many resource subscriptions: a session may hold %d, and %d KiB of URIs; unsubscribe from one first", h.opts.MaxSubscriptions, maxSubscriptionBytes>>10)
	}
	return mcp.Errorf(mcp.InvalidParams, "Too many resource subscriptions: a session may hold %d KiB of URIs; unsubscribe from one first", maxSubscriptionBytes>>10)
}

// admit refuses, before it runs, a request the session's limits do not
// allow: a resources/subscribe over the subscription limits.
func (s *session) admit(msg *rpcwire.Message) (json.RawMessage, *mcp.Error) {
	if msg.Method != "resources/subscribe" {
		return nil, nil
	}
	uri := subscribeURI(msg)
	if uri == "" {
		return nil, nil
	}
	s.mu.Lock()
	subs := make([]string, 0, len(s.subs))
	for u := range s.subs {
		subs = append(subs, u)
	}
	s.mu.Unlock()
	if !s.h.fits(subs, uri) {
		return nil, s.h.tooManySubscriptions()
	}
	return nil, nil
}

// persist writes what a request the session answered itself changed to
// the session's record, so that every instance sees it, and tells the
// other instances: the log level of logging/setLevel, the URIs of
// resources/subscribe and unsubscribe. The response waits for it, so the
// client's next request, wherever it lands, sees the change. A stdio
// session keeps everything in itself.
func (s *session) persist(ctx context.Context, msg *rpcwire.Message) *mcp.Error {
	if !s.http {
		return nil
	}
	var fn func(*Record) error
	switch msg.Method {
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		if strictjson.Unmarshal(msg.Params, &p) != nil {
			return nil // run refused it
		}
		level := p.Level
		fn = func(r *Record) error {
			if r.LogLevel == level {
				return ErrNoUpdate
			}
			r.LogLevel = level
			return nil
		}
	case "resources/subscribe":
		uri := subscribeURI(msg)
		fn = func(r *Record) error {
			if slices.Contains(r.Subscriptions, uri) {
				return ErrNoUpdate
			}
			if !s.h.fits(r.Subscriptions, uri) {
				return errTooManySubscriptions
			}
			r.Subscriptions = append(r.Subscriptions, uri)
			return nil
		}
	case "resources/unsubscribe":
		uri := subscribeURI(msg)
		fn = func(r *Record) error {
			i := slices.Index(r.Subscriptions, uri)
			if i < 0 {
				return ErrNoUpdate
			}
			r.Subscriptions = slices.Delete(r.Subscriptions, i, i+1)
			return nil
		}
	default:
		return nil
	}
	ctx, cancel := s.h.storeCtx(ctx)
	defer cancel()
	rec, err := s.h.store.Update(ctx, s.id, fn)
	switch {
	case errors.Is(err, errTooManySubscriptions):
		if rec, err := s.h.store.Get(ctx, s.id); err == nil {
			s.refresh(rec, false) // undo what run did here
		}
		return s.h.tooManySubscriptions()
	case errors.Is(err, ErrNotFound):
		return &mcp.Error{Code: codeSessionNotFound, Message: "Session not found: initialize a new session"}
	case err != nil:
		s.h.d.Logger().Error("legacy session store failed", "op", "update the session", "err", err)
		return &mcp.Error{Code: mcp.InternalError, Message: "Internal error: the session could not be updated; try again"}
	}
	s.refresh(rec, false)
	s.h.broadcast(&fleetMessage{Kind: kindChanged, Session: s.id, Record: rec})
	return nil
}
