package redisfleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/legacy/legacytest"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// The session store's contract on a real three-master Redis Cluster.
func TestSessionStoreOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	legacytest.Run(t, func(t *testing.T) legacy.Store {
		return redisfleet.New(cc, redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions()
	})
}

// On a real three-master Redis Cluster a change published by one
// instance reaches another, in order, and not the publisher itself.
func TestFanoutOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	a, b := redisfleet.New(cc, redisfleet.Options{Prefix: "test:"}).Fanout(), redisfleet.New(cc, redisfleet.Options{Prefix: "test:"}).Fanout()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gotA, gotB := make(chan server.Change, 64), make(chan server.Change, 64)
	go func() { _ = a.Receive(ctx, func(c server.Change) { gotA <- c }) }()
	go func() { _ = b.Receive(ctx, func(c server.Change) { gotB <- c }) }()
	// B may take a moment to subscribe: publish until one arrives.
	deadline := time.Now().Add(10 * time.Second)
	for arrived := false; !arrived; {
		if err := a.Publish(ctx, server.Change{Kind: server.ToolsChanged}); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		select {
		case c := <-gotB:
			arrived = c.Kind == server.ToolsChanged
		case <-time.After(50 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("no change reached the other instance")
			}
		}
	}
	time.Sleep(100 * time.Millisecond)
	for len(gotB) > 0 {
		<-gotB
	}
	uris := []string{"file:///1", "file:///2", "file:///3"}
	for _, u := range uris {
		if err := a.Publish(ctx, server.Change{Kind: server.ResourceUpdated, URI: u}); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range uris {
		select {
		case c := <-gotB:
			if c.Kind != server.ResourceUpdated || c.URI != u {
				t.Errorf("got %v %q, want resource %q (in order)", c.Kind, c.URI, u)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no update for %s", u)
		}
	}
	select {
	case c := <-gotA:
		t.Errorf("the publisher got its own change back: %v", c)
	default:
	}
}
