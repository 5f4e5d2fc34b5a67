package server

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/baton-mcp/baton/internal/era"
)

// Fanout carries list and resource changes between the instances of a
// deployment, so that a subscriptions/listen stream (or a legacy GET
// stream) on any instance hears about a tool, prompt or resource change
// made on any other, and a task listener about a task's new status. Package
// redisfleet provides one on Redis pub/sub (Fleet.Fanout).
//
// A change travels as a short message the server encodes and decodes
// itself; a Fanout carries it as it is. A change lost on the way costs
// freshness only: each is a hint that the listener reads again.
type Fanout interface {
	// Publish sends msg, a change made on this instance, to the other
	// instances. It must not deliver it back to this instance's Receive.
	Publish(ctx context.Context, msg []byte) error
	// Receive delivers the messages published by other instances until
	// ctx ends or the transport fails, returning the failure. The server
	// runs it in one goroutine and calls it again (after a pause) when it
	// fails. deliver does not keep msg.
	Receive(ctx context.Context, deliver func(msg []byte)) error
}

// fanoutMessage is a change as it travels between instances.
type fanoutMessage struct {
	Kind string `json:"k"`
	URI  string `json:"u,omitempty"`
}

// publish sends c through the fan-out.
func (s *Server) publish(ctx context.Context, c era.Change) error {
	b, err := json.Marshal(fanoutMessage{Kind: c.Kind.String(), URI: c.URI})
	if err != nil {
		return fmt.Errorf("encode a change: %w", err)
	}
	return s.fanout.Publish(ctx, b)
}

// received decodes a message from another instance; a malformed one, or
// one of a kind this version does not know, is dropped.
func (s *Server) received(msg []byte) {
	var m fanoutMessage
	if json.Unmarshal(msg, &m) != nil {
		return
	}
	kind, ok := era.ParseChangeKind(m.Kind)
	if !ok {
		return
	}
	s.receiveChange(era.Change{Kind: kind, URI: m.URI})
}

// fanoutTimeout bounds one Publish, so a slow fan-out never stalls the
// change that triggered it for long.
const fanoutTimeout = 2 * time.Second

// changed delivers a change made on this instance to its own listeners and,
// through the fan-out, to the other instances.
func (s *Server) changed(c era.Change) {
	s.hub.publish(c)
	if s.fanout == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.life, fanoutTimeout)
	defer cancel()
	if err := s.publish(ctx, c); err != nil {
		s.log.Warn("fan-out: publishing a change failed; listeners on other instances miss it", "kind", c.Kind, "err", err)
	}
}

// relay runs the fan-out's Receive until the server is closed, delivering
// remote changes to local listeners only.
func (s *Server) relay() {
	defer close(s.relayDone)
	pause := 100 * time.Millisecond
	for s.life.Err() == nil {
		err := s.fanout.Receive(s.life, s.received)
		if s.life.Err() != nil {
			return
		}
		s.log.Warn("fan-out: receiving changes failed; retrying", "err", err, "in", pause)
		select {
		case <-s.life.Done():
			return
		case <-time.After(pause):
		}
		pause = min(pause*2, 5*time.Second)
	}
}

// Close stops the server's background work (the fan-out receiver, the
// task signal receiver) and fails the tasks still running on this
// instance, so that their clients learn at once rather than when their
// lease lapses. It does not close listeners or connections served by an
// http.Server. Shutdown drains first and then closes; Close after it does
// nothing more.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		if s.fanout != nil {
			<-s.relayDone
		}
		s.tasks.close()
		if s.legacy != nil {
			s.legacy.Close()
		}
	})
	return nil
}
