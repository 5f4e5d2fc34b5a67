package legacy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// peer is a call's way to its client: it sends server-to-client requests
// and notifications on the call's own stream (SEP-2260) and waits for the
// answers, which arrive through the session.
type peer struct {
	s *session
	w wire
}

// Notify sends a notification for the call; once the call's stream has
// closed it goes to the session stream instead.
func (p *peer) Notify(ctx context.Context, method string, params any) error {
	msg, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	if err := p.w.send(msg); err != nil {
		if method == "notifications/progress" || method == "notifications/message" {
			return err // these belong to the call only
		}
		p.s.sendSession(msg)
	}
	return nil
}

// Request implements server.Peer.
func (p *peer) Request(ctx context.Context, reqs []server.PeerRequest, timeout time.Duration) ([]json.RawMessage, error) {
	out := make([]outgoing, len(reqs))
	for i, r := range reqs {
		out[i] = outgoing{key: strconv.Itoa(i), method: r.Method}
		if r.Params != nil {
			b, err := json.Marshal(r.Params)
			if err != nil {
				return nil, fmt.Errorf("encode %s params: %w", r.Method, err)
			}
			out[i].params = b
		}
	}
	answers, err := p.exchange(ctx, out, timeout)
	if err != nil {
		return nil, err
	}
	res := make([]json.RawMessage, len(reqs))
	for i := range reqs {
		res[i] = answers[strconv.Itoa(i)]
	}
	return res, nil
}

// outgoing is one server-to-client request of an exchange.
type outgoing struct {
	key    string // the caller's name for it (input request key)
	method string
	params json.RawMessage
	id     int64 // the wire id, set when sent
}

// askAll sends every input request of an input_required result to the
// client at once and waits for all the answers. URL-mode elicitations get
// an elicitationId, which 2025-11-25 requires.
func (p *peer) askAll(ctx context.Context, reqs mrtr.InputRequests, timeout time.Duration) (map[string]json.RawMessage, error) {
	out := make([]outgoing, 0, len(reqs))
	for _, kr := range reqs {
		params := kr.Request.Params()
		if e := kr.Request.Elicitation(); e != nil && e.Mode == elicit.ModeURL && e.ElicitationID == "" {
			withID := *e
			withID.ElicitationID = randomID("el-")
			params = &withID
		}
		var b json.RawMessage
		if params != nil {
			var err error
			if b, err = json.Marshal(params); err != nil {
				return nil, fmt.Errorf("encode input request %q: %w", kr.Key, err)
			}
		}
		out = append(out, outgoing{key: kr.Key, method: kr.Request.Method(), params: b})
	}
	return p.exchange(ctx, out, timeout)
}

func randomID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// exchange sends the requests on the call's stream and waits until every
// one is answered. It gives up when the timeout (0: the handler's default)
// passes, the call's context ends, or the session closes; outstanding
// requests are then cancelled with the client. A client error answer ends
// the exchange with a *server.ClientError.
func (p *peer) exchange(ctx context.Context, reqs []outgoing, timeout time.Duration) (map[string]json.RawMessage, error) {
	s := p.s
	if timeout <= 0 {
		timeout = s.h.opts.CallTimeout
	}
	replies := make(chan reply, len(reqs))
	open := make(map[string]*outgoing, len(reqs)) // wire id → request
	s.mu.Lock()
	for i := range reqs {
		s.nextID++
		reqs[i].id = s.nextID
		key := strconv.FormatInt(s.nextID, 10) // the id's JSON text, as replies carry it
		s.pending[key] = replies
		open[key] = &reqs[i]
	}
	s.mu.Unlock()
	// Whatever happens, no waiter stays registered.
	defer func() {
		s.mu.Lock()
		for i := range reqs {
			delete(s.pending, strconv.FormatInt(reqs[i].id, 10))
		}
		s.mu.Unlock()
	}()
	for i := range reqs {
		r := &reqs[i]
		req := jsonrpc.Request{JSONRPC: jsonrpc.Version, ID: jsonrpc.IntID(r.id), Method: r.method}
		if len(r.params) > 0 {
			req.Params = r.params // never "params": null (roots/list has none)
		}
		msg, err := json.Marshal(req)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", r.method, err)
		}
		if err := p.w.send(msg); err != nil {
			p.cancelOutstanding(open, "the request could not be sent")
			return nil, fmt.Errorf("send %s to the client: %w", r.method, err)
		}
	}

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(s.h.opts.KeepAlive)
	defer tick.Stop()
	answers := make(map[string]json.RawMessage, len(reqs))
	for len(open) > 0 {
		select {
		case rp := <-replies:
			r, ok := open[rp.id]
			if !ok {
				continue
			}
			delete(open, rp.id)
			if rp.err != nil {
				p.cancelOutstanding(open, "another request of the same call failed")
				return nil, &server.ClientError{Method: r.method, Err: rp.err}
			}
			answers[r.key] = rp.result
		case <-tick.C:
			_ = p.w.keepAlive()
		case <-timer.C:
			p.cancelOutstanding(open, fmt.Sprintf("timed out after %v", timeout))
			return nil, fmt.Errorf("%s: %w after %v", methods(open), server.ErrTimeout, timeout)
		case <-ctx.Done():
			// The call's context also ends when the session does (DELETE,
			// expiry, end of input); its cause says which.
			p.cancelOutstanding(open, "the request that caused it was cancelled")
			return nil, fmt.Errorf("%s: the call was cancelled: %w", methods(open), context.Cause(ctx))
		}
	}
	return answers, nil
}

// cancelOutstanding tells the client to stop working on the requests not
// answered yet.
func (p *peer) cancelOutstanding(open map[string]*outgoing, reason string) {
	for _, r := range open {
		msg, err := jsonrpc.EncodeNotification("notifications/cancelled", map[string]any{"requestId": r.id, "reason": reason})
		if err == nil && p.w.send(msg) != nil {
			p.s.sendSession(msg)
		}
	}
}

func methods(open map[string]*outgoing) string {
	seen := map[string]bool{}
	var out []string
	for _, r := range open {
		if !seen[r.method] {
			seen[r.method] = true
			out = append(out, r.method)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

var (
	_ server.Peer     = (*peer)(nil)
	_ server.Notifier = (*peer)(nil)
)
