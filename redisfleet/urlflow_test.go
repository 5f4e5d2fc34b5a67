package redisfleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

func urlRec(id, principal string) server.URLFlowRecord {
	return server.URLFlowRecord{ID: id, Principal: principal, Binding: "b1", Purpose: "demo", Expires: time.Now().Add(time.Minute).UTC(), State: server.URLLinkPending}
}

func TestStoreAcrossInstances(t *testing.T) {
	srv := testredis.Start(t)
	ctx := context.Background()
	a := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "t:"}).URLFlow()
	b := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "t:"}).URLFlow()
	c := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "t:"}).URLFlow()
	if err := a.Create(ctx, urlRec("id1", "alice"), 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	if id, err := c.Lookup(ctx, "alice", "b1"); err != nil || id != "id1" {
		t.Fatalf("lookup %q %v", id, err)
	}
	if _, err := c.Lookup(ctx, "bob", "b1"); !errors.Is(err, server.ErrURLLinkNotFound) {
		t.Fatalf("bob's lookup: %v", err)
	}
	waited := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		waited <- c.Wait(wctx, "id1")
	}()
	// Quota: two pending per principal.
	if err := a.Create(ctx, urlRec("id2", "alice"), 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, urlRec("id3", "alice"), 2, time.Minute); !errors.Is(err, server.ErrURLLinkQuota) {
		t.Fatalf("third pending link: %v", err)
	}
	// One claim wins among many instances.
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		s := redisfleet.New(srv.Client(t), redisfleet.Options{Prefix: "t:"}).URLFlow()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Claim(ctx, "id1")
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, server.ErrURLLinkUsed):
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d claims won", wins.Load())
	}
	if err := b.Finish(ctx, "id1", server.URLOutcome{OK: true, Detail: "connected"}); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatalf("wait on another instance: %v", err)
	}
	got, err := c.Get(ctx, "id1")
	if err != nil || got.State != server.URLLinkDone || got.Outcome == nil || got.Outcome.Detail != "connected" || got.Principal != "alice" {
		t.Fatalf("%+v %v", got, err)
	}
	if err := b.Finish(ctx, "id1", server.URLOutcome{}); !errors.Is(err, server.ErrURLLinkUsed) {
		t.Fatalf("second finish: %v", err)
	}
	if _, err := b.Claim(ctx, "id1"); !errors.Is(err, server.ErrURLLinkUsed) {
		t.Fatalf("claim after done: %v", err)
	}
	// The finished link no longer counts against the quota.
	if err := a.Create(ctx, urlRec("id3", "alice"), 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, "nope"); !errors.Is(err, server.ErrURLLinkNotFound) {
		t.Fatal(err)
	}
	ttl, err := srv.Client(t).PTTL(ctx, "t:urlflow:out:id1").Result()
	if err != nil || ttl <= 0 || ttl > time.Minute {
		t.Fatalf("outcome ttl %v %v", ttl, err)
	}
}
