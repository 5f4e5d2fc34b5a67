package server

import (
	"context"
	"time"
)

// Fanout carries list and resource changes between the instances of a
// deployment, so that a subscriptions/listen stream (or a legacy GET
// stream) on any instance hears about a tool, prompt or resource change
// made on any other. Package redisfleet provides one on Redis pub/sub (Fleet.Fanout).
type Fanout interface {
	// Publish sends a change made on this instance to the other instances.
	// It must not deliver the change back to this instance's Receive.
	Publish(ctx context.Context, c Change) error
	// Receive delivers changes published by other instances until ctx ends
	// or the transport fails, returning the failure. The server runs it in
	// one goroutine and calls it again (after a pause) when it fails.
	Receive(ctx context.Context, deliver func(Change)) error
}

// fanoutTimeout bounds one Publish, so a slow fan-out never stalls the
// change that triggered it for long.
const fanoutTimeout = 2 * time.Second

// changed delivers a change made on this instance to its own listeners and,
// through the fan-out, to the other instances.
func (s *Server) changed(c Change) {
	s.hub.publish(c)
	if s.fanout == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.life, fanoutTimeout)
	defer cancel()
	if err := s.fanout.Publish(ctx, c); err != nil {
		s.log.Warn("fan-out: publishing a change failed; listeners on other instances miss it", "kind", c.Kind, "err", err)
	}
}

// relay runs the fan-out's Receive until the server is closed, delivering
// remote changes to local listeners only.
func (s *Server) relay() {
	defer close(s.relayDone)
	pause := 100 * time.Millisecond
	for s.life.Err() == nil {
		err := s.fanout.Receive(s.life, s.receiveChange)
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
