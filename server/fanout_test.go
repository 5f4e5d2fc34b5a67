package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/era"
)

// pipeFanout hands what one server publishes to the other's Receive.
type pipeFanout struct {
	mu   sync.Mutex
	sent [][]byte
	in   chan []byte
}

func (p *pipeFanout) Publish(_ context.Context, msg []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, append([]byte(nil), msg...))
	return nil
}

func (p *pipeFanout) Receive(ctx context.Context, deliver func([]byte)) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case m := <-p.in:
			deliver(m)
		}
	}
}

// A change published on one instance arrives as the same change on
// another; a message that is not one of the server's is dropped.
func TestFanoutCarriesChanges(t *testing.T) {
	a, b := &pipeFanout{}, &pipeFanout{in: make(chan []byte, 8)}
	sa := newTestServer(t, &Options{Fanout: a})
	sb := newTestServer(t, &Options{Fanout: b})
	got := make(chan era.Change, 8)
	stop := sb.hub.watch(func(c era.Change) { got <- c })
	defer stop()

	sa.changed(era.Change{Kind: era.ResourceUpdated, URI: "file:///x"})
	a.mu.Lock()
	sent := a.sent
	a.mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("published %d messages, want 1", len(sent))
	}
	for _, junk := range []string{"", "{", `{"k":"weather"}`, `[1]`, `{"k":7}`} {
		b.in <- []byte(junk)
	}
	b.in <- sent[0]
	select {
	case c := <-got:
		if c.Kind != era.ResourceUpdated || c.URI != "file:///x" {
			t.Fatalf("received %v %q, want the resource update of file:///x", c.Kind, c.URI)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the change did not arrive")
	}
	select {
	case c := <-got:
		t.Fatalf("a malformed message became a change: %+v", c)
	case <-time.After(50 * time.Millisecond):
	}
}
