package server

import (
	"context"
	"time"

	"github.com/baton-mcp/baton/jsonrpc"
)

// agreeFilter checks a subscriptions/listen request and returns the subset
// of the requested notifications this server supports.
func (s *Server) agreeFilter(r *request) (SubscriptionFilter, *jsonrpc.Error) {
	caps := s.Capabilities()
	if caps.Tools == nil && caps.Prompts == nil && caps.Resources == nil {
		return SubscriptionFilter{}, methodNotFound(r.method)
	}
	if r.p.Notifications == nil {
		return SubscriptionFilter{}, invalidParams("subscriptions/listen needs a notifications filter")
	}
	want := *r.p.Notifications
	var got SubscriptionFilter
	got.ToolsListChanged = want.ToolsListChanged && caps.Tools != nil
	got.PromptsListChanged = want.PromptsListChanged && caps.Prompts != nil
	if caps.Resources != nil {
		got.ResourcesListChanged = want.ResourcesListChanged
		got.ResourceSubscriptions = want.ResourceSubscriptions
	}
	return got, nil
}

type subscriptionMeta struct {
	ID jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId"`
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

// listen acknowledges a subscription and then forwards matching changes
// until ctx ends or a write fails. keepAlive, if not nil, is called when the
// stream has been idle for listenKeepAlive.
func (s *Server) listen(ctx context.Context, id jsonrpc.ID, f SubscriptionFilter, send func([]byte) error, keepAlive func() error) {
	meta := subscriptionMeta{ID: id}
	l := s.hub.add(f)
	defer s.hub.remove(l)
	ack, err := jsonrpc.EncodeNotification("notifications/subscriptions/acknowledged", ackParams{Notifications: f, Meta: meta})
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
		case <-tick:
			if keepAlive() != nil {
				return
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
				b, err := jsonrpc.EncodeNotification(m.method, m.params)
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
