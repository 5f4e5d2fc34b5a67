package redisfleet_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

// The session store's contract on a real three-master Redis Cluster.
func TestSessionStoreOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	storetest.Sessions(t, func(t *testing.T) legacy.Store {
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
	gotA, gotB := make(chan string, 64), make(chan string, 64)
	go func() { _ = a.Receive(ctx, func(m []byte) { gotA <- string(m) }) }()
	go func() { _ = b.Receive(ctx, func(m []byte) { gotB <- string(m) }) }()
	// B may take a moment to subscribe: publish until one arrives.
	deadline := time.Now().Add(10 * time.Second)
	for arrived := false; !arrived; {
		if err := a.Publish(ctx, []byte("tools")); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		select {
		case c := <-gotB:
			arrived = c == "tools"
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
		if err := a.Publish(ctx, []byte(u)); err != nil {
			t.Fatal(err)
		}
	}
	for _, u := range uris {
		select {
		case c := <-gotB:
			if c != u {
				t.Errorf("got %q, want %q (in order)", c, u)
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

// The task store's contract on a real three-master Redis Cluster: every
// operation touches one key, so no CROSSSLOT.
func TestTaskStoreOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	storetest.Tasks(t, func(t *testing.T) server.TaskStore {
		return redisfleet.New(cc, redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Tasks()
	})
}

// On a real three-master Redis Cluster a state is redeemed once across
// instances: a second redemption, on the same or another instance, is
// refused, and of many racing instances exactly one wins. The ids spread
// over the three masters' slots.
func TestLedgerOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	ctx := context.Background()
	a := redisfleet.New(cc, redisfleet.Options{Prefix: "test:"}).Ledger()
	b := redisfleet.New(cc, redisfleet.Options{Prefix: "test:"}).Ledger() // another instance
	exp := time.Now().Add(time.Minute)
	nodes := map[string]bool{}
	for i := 0; i < 32; i++ {
		id := fmt.Sprintf("state-%d", i)
		if err := a.Redeem(ctx, id, exp); err != nil {
			t.Fatalf("redeem %s: %v", id, err)
		}
		if err := a.Redeem(ctx, id, exp); !errors.Is(err, server.ErrAlreadyRedeemed) {
			t.Fatalf("second redemption of %s on the same instance: %v", id, err)
		}
		if err := b.Redeem(ctx, id, exp); !errors.Is(err, server.ErrAlreadyRedeemed) {
			t.Fatalf("second redemption of %s on another instance: %v", id, err)
		}
		key := "test:redeemed:" + id
		ttl, err := cc.PTTL(ctx, key).Result()
		if err != nil || ttl <= 0 || ttl > time.Minute {
			t.Fatalf("%s must expire with the state: ttl %v, %v", key, ttl, err)
		}
		n, err := cc.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		nodes[n.Options().Addr] = true
	}
	if len(nodes) != 3 {
		t.Errorf("the keys landed on %d masters, want 3 (the test must cross slots)", len(nodes))
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		l := redisfleet.New(cc, redisfleet.Options{Prefix: "race:"}).Ledger()
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch err := l.Redeem(ctx, "same", exp); {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, server.ErrAlreadyRedeemed):
				t.Errorf("racing redemption: %v", err)
			}
		}()
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d racing instances redeemed the same state, want 1", n)
	}
}
