package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// agreeFilter checks a subscriptions/listen request and returns the subset
// of the requested notifications this server supports.
func (s *Server) agreeFilter(r *request) (SubscriptionFilter, *mcp.Error) {
	caps := s.capabilities()
	if caps.Tools == nil && caps.Prompts == nil && caps.Resources == nil {
		return SubscriptionFilter{}, methodNotFound(r.method)
	}
	if r.p.Notifications == nil {
		return SubscriptionFilter{}, invalidParams("subscriptions/listen needs a notifications filter")
	}
	want := *r.p.Notifications
	if n, max := len(want.ResourceSubscriptions), s.opts.MaxListenSubscriptions; max > 0 && n > max {
		return SubscriptionFilter{}, invalidParams("resourceSubscriptions lists %d URIs, over this server's limit of %d per stream", n, max)
	}
	size := 0
	for _, u := range want.ResourceSubscriptions {
		size += len(u)
	}
	if size > maxSubscriptionBytes {
		return SubscriptionFilter{}, invalidParams("resourceSubscriptions URIs total %d bytes, over this server's limit of %d per stream", size, maxSubscriptionBytes)
	}
	var got SubscriptionFilter
	got.ToolsListChanged = want.ToolsListChanged && caps.Tools != nil
	got.PromptsListChanged = want.PromptsListChanged && caps.Prompts != nil
	if caps.Resources != nil {
		got.ResourcesListChanged = want.ResourcesListChanged
		got.ResourceSubscriptions = want.ResourceSubscriptions
	}
	if want.Tasks {
		if e := requireTasksExtension(r); e != nil {
			return SubscriptionFilter{}, e
		}
		got.Tasks = s.tasksAdvertised()
	}
	return got, nil
}

type subscriptionMeta struct {
	ID mcp.ID `json:"io.modelcontextprotocol/subscriptionId"`
}

type ackParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          subscriptionMeta   `json:"_meta"`
}

type listNotificationParams struct {
	Meta subscriptionMeta `json:"_meta"`
}

type updatedParams struct {
	URI  string           `json:"uri"`
	Meta subscriptionMeta `json:"_meta"`
}

// maxSubscriptionBytes bounds the total length of a stream's
// resourceSubscriptions URIs, so that with Options.MaxListenSubscriptions
// it bounds what a stream holds (the URIs are copied out of the request).
const maxSubscriptionBytes = 256 << 10

// listenOwner is whom a listen stream counts against for
// Options.MaxListenStreamsPerPrincipal: its principal when authenticated,
// otherwise the client address (addr, the peer's IP; behind a proxy, the
// proxy's, so anonymous callers behind one proxy share one quota).
func listenOwner(ctx context.Context, addr string) string {
	if p := PrincipalFromContext(ctx); p != "" {
		return "principal:" + p
	}
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return "address:" + addr
}

// openListener registers a listener for f, or says which cap refused it:
// the error and the HTTP status to answer with.
func (s *Server) openListener(f SubscriptionFilter, owner string) (*listener, int, *mcp.Error) {
	if s.isDraining() {
		return nil, http.StatusServiceUnavailable, mcp.Errorf(mcp.InternalError,
			"This server instance is shutting down and opens no subscriptions/listen stream; try again (another instance will serve it)")
	}
	l, err := s.hub.add(f, owner)
	switch {
	case errors.Is(err, errTooManyListeners):
		return nil, http.StatusServiceUnavailable, withRefusal(mcp.Errorf(mcp.InternalError,
			"Too many subscriptions/listen streams: this server has its limit of %d open; try again later", s.opts.MaxListenStreams), "Options.MaxListenStreams")
	case errors.Is(err, errTooManyForOwner):
		who := "this principal"
		if strings.HasPrefix(owner, "address:") {
			who = "this client address"
		}
		return nil, http.StatusTooManyRequests, withRefusal(mcp.Errorf(mcp.InvalidRequest,
			"Too many subscriptions/listen streams: %s has its limit of %d open; close one first", who, s.opts.MaxListenStreamsPerPrincipal), "Options.MaxListenStreamsPerPrincipal")
	}
	return l, 0, nil
}

// listen acknowledges a subscription and then forwards matching changes
// until ctx ends or a write fails; it removes l when it returns. keepAlive,
// if not nil, is called when the stream has been idle for listenKeepAlive.
func (s *Server) listen(ctx context.Context, id mcp.ID, f SubscriptionFilter, l *listener, send func([]byte) error, keepAlive func() error) {
	meta := subscriptionMeta{ID: id}
	defer s.hub.remove(l)
	tl := s.openTaskListener(ctx, &f) // before the ack: no change is missed
	defer s.closeTaskListener(tl)
	ack, err := rpcwire.EncodeNotification("notifications/subscriptions/acknowledged", ackParams{Notifications: f, Meta: meta})
	if err != nil || send(ack) != nil {
		return
	}
	var tick <-chan time.Time
	if keepAlive != nil {
		t := time.NewTicker(listenKeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.draining:
			s.closeListen(id, send)
			return
		case <-tick:
			if keepAlive() != nil {
				return
			}
		case <-tl.ready():
			for _, rec := range tl.take() {
				b, err := s.taskNotification(rec, meta)
				if err != nil {
					s.log.Error("encode task notification", "err", err)
					continue
				}
				if send(b) != nil {
					return
				}
			}
		case <-l.signal:
			p := l.take()
			var msgs []notification
			if p.tools {
				msgs = append(msgs, notification{"notifications/tools/list_changed", listNotificationParams{meta}})
			}
			if p.prompts {
				msgs = append(msgs, notification{"notifications/prompts/list_changed", listNotificationParams{meta}})
			}
			if p.resources {
				msgs = append(msgs, notification{"notifications/resources/list_changed", listNotificationParams{meta}})
			}
			for _, u := range p.updated {
				msgs = append(msgs, notification{"notifications/resources/updated", updatedParams{u, meta}})
			}
			for _, m := range msgs {
				b, err := rpcwire.EncodeNotification(m.method, m.params)
				if err != nil {
					s.log.Error("encode listen notification", "err", err)
					continue
				}
				if send(b) != nil {
					return
				}
			}
		}
	}
}

type notification struct {
	method string
	params any
}
