package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// fleetInstance is one instance of a two-instance fleet sharing a Redis
// task store and fan-out; its tool "job" runs as a task until release
// closes.
func fleetInstance(t *testing.T, c *redis.Client, release <-chan struct{}) *server.Server {
	t.Helper()
	fleet := redisfleet.New(c, redisfleet.Options{Prefix: "baton:test:tasknotify:"})
	s, err := server.New(mcp.Implementation{Name: "fleet", Version: "1"}, &server.Options{
		Fanout: fleet.Fanout(),
		Tasks:  server.TaskOptions{Store: fleet.Tasks()},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	err = s.AddTool(server.Tool{Name: "job"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		select {
		case <-release:
			return server.TextResult("done by " + req.Principal()), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, server.RunAsTask(server.TaskOptional))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// as serves h as principal p.
func as(h http.Handler, p string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(server.ContextWithPrincipal(r.Context(), p)))
	})
}

var tasksExt = &mcp.ClientCapabilities{Extensions: map[string]json.RawMessage{mcp.TasksExtension: json.RawMessage(`{}`)}}

// A listen stream on instance B hears of a task that runs on instance A
// (the task store and the fan-out on one real Redis), and only of its own
// principal's tasks.
func TestTaskNotificationsAcrossInstances(t *testing.T) {
	rs := testredis.Start(t)
	rc := rs.Client(t)
	release := make(chan struct{})
	a, b := fleetInstance(t, rc, release), fleetInstance(t, rc, release)
	// Both instances receive before anything is published.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := rc.PubSubNumSub(t.Context(), "baton:test:tasknotify:changes").Result()
		if err == nil && m["baton:test:tasknotify:changes"] >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instances did not subscribe: %v %v", m, err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	listen := func(p string) <-chan mcptest.Notification {
		ts := httptest.NewServer(as(b, p))
		t.Cleanup(ts.Close)
		notes := make(chan mcptest.Notification, 16)
		c, err := mcptest.New(mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{Capabilities: tasksExt, OnNotification: func(n mcptest.Notification) { notes <- n }})
		if err != nil {
			t.Fatal(err)
		}
		lctx, lcancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = c.Do(lctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"tasks": true}})
		}()
		t.Cleanup(func() { lcancel(); <-done })
		return notes
	}
	next := func(notes <-chan mcptest.Notification) mcptest.Notification {
		t.Helper()
		select {
		case n := <-notes:
			return n
		case <-ctx.Done():
			t.Fatal("timed out waiting for a notification on instance B")
		}
		return mcptest.Notification{}
	}
	aliceB, bobB := listen("alice"), listen("bob")
	for _, notes := range []<-chan mcptest.Notification{aliceB, bobB} {
		if n := next(notes); n.Method != "notifications/subscriptions/acknowledged" || string(n.Params) == "" {
			t.Fatalf("first notification %s %s", n.Method, n.Params)
		}
	}

	// Alice's task runs on A.
	ca, err := mcptest.New(mcptest.Handler(as(a, "alice")), &mcptest.Options{Capabilities: tasksExt})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ca.Do(ctx, "tools/call", map[string]any{"name": "job", "arguments": map[string]any{}})
	if err != nil || r.Error != nil {
		t.Fatalf("tools/call on A: %v %s", err, r.Body)
	}
	var created struct {
		TaskID string `json:"taskId"`
	}
	if err := json.Unmarshal(r.Result, &created); err != nil || created.TaskID == "" {
		t.Fatalf("no task created: %s", r.Body)
	}
	close(release)

	n := next(aliceB)
	var got struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(n.Params, &got); err != nil {
		t.Fatal(err)
	}
	if n.Method != "notifications/tasks" || got.TaskID != created.TaskID || got.Status != "completed" ||
		len(got.Result.Content) != 1 || got.Result.Content[0].Text != "done by alice" {
		t.Errorf("alice's stream on B got %s %s, want her task %s completed", n.Method, n.Params, created.TaskID)
	}
	select {
	case n := <-bobB:
		t.Errorf("bob's stream on B heard %s %s", n.Method, n.Params)
	case <-time.After(200 * time.Millisecond):
	}
}
