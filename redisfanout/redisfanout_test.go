package redisfanout_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfanout"
	"github.com/baton-mcp/baton/server"
)

const channel = "baton:test:changes"

func newInstance(t *testing.T, c *redis.Client) *server.Server {
	t.Helper()
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k", Secret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Implementation{Name: "fleet", Version: "1"}, &server.Options{
		StateKeys: ring,
		Fanout:    redisfanout.New(c, channel),
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if err := s.AddResource(server.Resource{URI: "file:///watched", Name: "watched"}, func(context.Context, *server.ResourceRequest) (*server.ResourceResult, error) {
		return &server.ResourceResult{}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(server.Tool{Name: "base"}, func(context.Context, *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("ok"), nil
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitSubscribers waits until n receivers listen on the channel.
func waitSubscribers(t *testing.T, c *redis.Client, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := c.PubSubNumSub(context.Background(), channel).Result()
		if err == nil && m[channel] >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d subscribers on %s (%v)", m[channel], channel, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listen opens subscriptions/listen on url and returns its messages.
func listen(t *testing.T, url string, filter map[string]any) <-chan map[string]any {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen", "params": map[string]any{
		"notifications": filter,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	out := make(chan map[string]any, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(d), &m) == nil {
					out <- m
				}
			}
		}
	}()
	return out
}

func next(t *testing.T, ch <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m, ok := <-ch:
		if !ok {
			t.Fatal("stream ended")
		}
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
	}
	return nil
}

// A change made on instance A reaches a listener on instance B.
func TestChangeReachesOtherInstance(t *testing.T) {
	rs := testredis.Start(t)
	c := rs.Client(t)
	a, b := newInstance(t, c), newInstance(t, c)
	waitSubscribers(t, c, 2)
	tsB := httptest.NewServer(b)
	t.Cleanup(tsB.Close) // after the listen stream is cancelled

	stream := listen(t, tsB.URL, map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///watched"}})
	if m := next(t, stream); m["method"] != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %v", m)
	}
	if err := a.AddTool(server.Tool{Name: "added_on_a"}, func(context.Context, *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("a"), nil
	}); err != nil {
		t.Fatal(err)
	}
	m := next(t, stream)
	if m["method"] != "notifications/tools/list_changed" {
		t.Fatalf("want tools/list_changed from instance A, got %v", m)
	}
	meta, _ := m["params"].(map[string]any)["_meta"].(map[string]any)
	if meta["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("subscription id: %v", m)
	}
	a.NotifyResourceUpdated("file:///other") // not subscribed on B: filtered
	a.NotifyResourceUpdated("file:///watched")
	m = next(t, stream)
	if m["method"] != "notifications/resources/updated" || m["params"].(map[string]any)["uri"] != "file:///watched" {
		t.Fatalf("want resources/updated for the watched URI, got %v", m)
	}
}

// A fan-out never hands an instance its own changes back.
func TestOwnChangesAreNotEchoed(t *testing.T) {
	rs := testredis.Start(t)
	c := rs.Client(t)
	f1, f2 := redisfanout.New(c, channel), redisfanout.New(c, channel)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan server.Change, 4)
	go func() { _ = f1.Receive(ctx, func(ch server.Change) { got <- ch }) }()
	waitSubscribers(t, c, 1)
	if err := f1.Publish(ctx, server.Change{Kind: server.ToolsChanged}); err != nil {
		t.Fatal(err)
	}
	if err := f2.Publish(ctx, server.Change{Kind: server.PromptsChanged}); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-got:
		if ch.Kind != server.PromptsChanged {
			t.Fatalf("received %v first: an instance's own change came back", ch.Kind)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other instance's change did not arrive")
	}
}

// Receive reports a Redis failure instead of hanging; Publish errors too.
func TestRedisFailure(t *testing.T) {
	rs := testredis.Start(t)
	c := redis.NewClient(rs.Options())
	f := redisfanout.New(c, channel)
	_ = c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Receive(ctx, func(server.Change) {}); err == nil || ctx.Err() != nil {
		t.Fatalf("Receive on a closed client: %v (ctx %v)", err, ctx.Err())
	}
	if err := f.Publish(ctx, server.Change{Kind: server.ToolsChanged}); err == nil {
		t.Fatal("Publish on a closed client succeeded")
	}
}
