package redisfleet_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// prefix is the fleet's key prefix; channel is its fan-out's channel.
const (
	prefix  = "baton:test:"
	channel = prefix + "changes"
)

func newFanoutInstance(t *testing.T, c *redis.Client) *server.Server {
	t.Helper()
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k", Secret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(mcp.Implementation{Name: "fleet", Version: "1"}, &server.Options{
		StateKeys: ring,
		Fanout:    redisfleet.New(c, redisfleet.Options{Prefix: prefix}).Fanout(),
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

// listen opens subscriptions/listen on url, through mcptest, under the
// JSON-RPC id "sub-1", and returns its notifications as they arrive. The
// stream ends with the test.
func listen(t *testing.T, url string, filter map[string]any) <-chan mcptest.Notification {
	t.Helper()
	out := make(chan mcptest.Notification, 16)
	c, err := mcptest.New(mcptest.URL(url, nil), &mcptest.Options{OnNotification: func(n mcptest.Notification) { out <- n }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = c.Do(ctx, "subscriptions/listen", map[string]any{"notifications": filter}, mcptest.WithID("sub-1"))
	}()
	t.Cleanup(func() {
		cancel()
		<-ended
	})
	return out
}

func next(t *testing.T, ch <-chan mcptest.Notification) mcptest.Notification {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no message within 5s")
	}
	return mcptest.Notification{}
}

// A change made on instance A reaches a listener on instance B.
func TestChangeReachesOtherInstance(t *testing.T) {
	rs := testredis.Start(t)
	c := rs.Client(t)
	a, b := newFanoutInstance(t, c), newFanoutInstance(t, c)
	waitSubscribers(t, c, 2)
	tsB := httptest.NewServer(b)
	t.Cleanup(tsB.Close) // after the listen stream is cancelled

	stream := listen(t, tsB.URL, map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///watched"}})
	if m := next(t, stream); m.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %s %s", m.Method, m.Params)
	}
	if err := a.AddTool(server.Tool{Name: "added_on_a"}, func(context.Context, *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("a"), nil
	}); err != nil {
		t.Fatal(err)
	}
	m := next(t, stream)
	if m.Method != "notifications/tools/list_changed" {
		t.Fatalf("want tools/list_changed from instance A, got %s %s", m.Method, m.Params)
	}
	var p struct {
		URI  string         `json:"uri"`
		Meta map[string]any `json:"_meta"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || p.Meta["io.modelcontextprotocol/subscriptionId"] != "sub-1" {
		t.Fatalf("subscription id: %s (%v)", m.Params, err)
	}
	a.NotifyResourceUpdated("file:///other") // not subscribed on B: filtered
	a.NotifyResourceUpdated("file:///watched")
	m = next(t, stream)
	p.URI = ""
	if err := json.Unmarshal(m.Params, &p); err != nil || m.Method != "notifications/resources/updated" || p.URI != "file:///watched" {
		t.Fatalf("want resources/updated for the watched URI, got %s %s", m.Method, m.Params)
	}
}

// A fan-out never hands an instance its own changes back.
func TestOwnChangesAreNotEchoed(t *testing.T) {
	rs := testredis.Start(t)
	c := rs.Client(t)
	f1, f2 := redisfleet.New(c, redisfleet.Options{Prefix: prefix}).Fanout(), redisfleet.New(c, redisfleet.Options{Prefix: prefix}).Fanout()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan string, 4)
	go func() { _ = f1.Receive(ctx, func(m []byte) { got <- string(m) }) }()
	waitSubscribers(t, c, 1)
	if err := f1.Publish(ctx, []byte("tools")); err != nil {
		t.Fatal(err)
	}
	if err := f2.Publish(ctx, []byte("prompts")); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-got:
		if ch != "prompts" {
			t.Fatalf("received %q first: an instance's own change came back", ch)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the other instance's change did not arrive")
	}
}

// Receive reports a Redis failure instead of hanging; Publish errors too.
func TestRedisFailure(t *testing.T) {
	rs := testredis.Start(t)
	c := redis.NewClient(rs.Options())
	f := redisfleet.New(c, redisfleet.Options{Prefix: prefix}).Fanout()
	_ = c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Receive(ctx, func([]byte) {}); err == nil || ctx.Err() != nil {
		t.Fatalf("Receive on a closed client: %v (ctx %v)", err, ctx.Err())
	}
	if err := f.Publish(ctx, []byte("tools")); err == nil {
		t.Fatal("Publish on a closed client succeeded")
	}
}
