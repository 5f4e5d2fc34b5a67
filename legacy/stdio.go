package legacy

import (
	"context"
	"errors"

	"sync"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// ErrEndOfInput is the cause of every wait that a stdio session's end of
// input ends: the client can no longer answer.
var ErrEndOfInput = errors.New("the client closed its input (end of stdin)")

// NewStdioSession is called by the server: the process becomes one
// legacy session once its client sends initialize.
func (h *adapter) NewStdioSession(ctx context.Context) era.StdioSession {
	return &stdioSession{h: h, ctx: ctx}
}

type stdioSession struct {
	h   *adapter
	ctx context.Context

	mu sync.Mutex
	s  *session
}

// stdioWire carries a call's messages on stdout.
type stdioWire struct{ write func([]byte) error }

func (w stdioWire) send(msg []byte) error { return w.write(msg) }
func (w stdioWire) keepAlive() error      { return nil }

// HandleMessage implements the server's stdio session.
func (ss *stdioSession) HandleMessage(ctx context.Context, msg *rpcwire.Message, write func([]byte) error) {
	ss.mu.Lock()
	s := ss.s
	ss.mu.Unlock()
	if s == nil {
		if msg.Method != "initialize" || !msg.IsRequest() {
			b, _ := rpcwire.AppendError(nil, msg.ID, mcp.Errorf(mcp.InvalidRequest, "the session is not initialized"))
			_ = write(b)
			return
		}
		p, res, e := ss.h.negotiate(msg)
		if e != nil {
			b, _ := rpcwire.AppendError(nil, msg.ID, e)
			_ = write(b)
			return
		}
		s = newSession(ss.h, randomID("stdio-"), p, write)
		ss.mu.Lock()
		ss.s = s
		ss.mu.Unlock()
		ss.h.mu.Lock()
		ss.h.stdio[s] = struct{}{}
		ss.h.mu.Unlock()
		_ = write(rpcwire.AppendResult(nil, msg.ID, res))
		return
	}
	switch {
	case msg.IsResponse():
		s.deliver(msg)
	case msg.IsNotification():
		s.notification(msg)
	default:
		s.calls.Add(1)
		go func() {
			defer s.calls.Done()
			finish := func(b []byte) { _ = write(b) }
			s.serveRequest(ctx, msg, nil, stdioWire{write}, finish, func() {})
		}()
	}
}

// Close implements the server's stdio session: end of input. Every wait for the
// client fails with ErrEndOfInput, and Close returns once the requests in
// flight have answered.
func (ss *stdioSession) Close() {
	ss.mu.Lock()
	s := ss.s
	ss.mu.Unlock()
	if s == nil {
		return
	}
	ss.h.mu.Lock()
	delete(ss.h.stdio, s)
	ss.h.mu.Unlock()
	s.close(ErrEndOfInput)
	s.calls.Wait()
}
