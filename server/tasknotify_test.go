package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// asPrincipal serves h as the authenticated principal p.
func asPrincipal(h http.Handler, p string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(ContextWithPrincipal(r.Context(), p)))
	})
}

// capsListen is listenStream from a client declaring caps.
func capsListen(t *testing.T, h http.Handler, caps string, id any, filter map[string]any) <-chan mcptest.Notification {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	notes := make(chan mcptest.Notification, 64)
	c := newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{Capabilities: capsOf(t, caps), OnNotification: func(n mcptest.Notification) { notes <- n }})
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan error, 1)
	go func() {
		r, err := c.Do(ctx, "subscriptions/listen", map[string]any{"notifications": filter}, mcptest.WithID(id))
		if err == nil {
			err = fmt.Errorf("a response: %s", r.Body)
		}
		ended <- err
	}()
	t.Cleanup(func() {
		cancel()
		receive(t, ended, "the listen request to end")
	})
	return notes
}

type taskNote struct {
	TaskID string          `json:"taskId"`
	Status string          `json:"status"`
	Result json.RawMessage `json:"result"`
	Meta   map[string]any  `json:"_meta"`
}

func wantTaskNote(t *testing.T, notes <-chan mcptest.Notification, subID any) taskNote {
	t.Helper()
	n := receive(t, notes, "notifications/tasks")
	if n.Method != "notifications/tasks" {
		t.Fatalf("got %s %s, want notifications/tasks", n.Method, n.Params)
	}
	var tn taskNote
	if err := json.Unmarshal(n.Params, &tn); err != nil {
		t.Fatal(err)
	}
	if tn.Meta[metaSubscriptionID] != subID {
		t.Errorf("subscriptionId = %v, want %v", tn.Meta[metaSubscriptionID], subID)
	}
	return tn
}

// A stream that asked for tasks hears of its principal's tasks only, with
// the task's detail; a caller without the extension gets -32021; an
// anonymous one is not agreed tasks.
func TestTaskNotificationsOnListen(t *testing.T) {
	s := newTestServer(t, nil)
	gate := map[string]*gate{"alice": newGate(), "bob": newGate()}
	mustAddTool(t, s, Tool{Name: "job"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		return gate[req.Principal()].handler(ctx, req)
	}, RunAsTask(TaskOptional))
	alice, bob := asPrincipal(s, "alice"), asPrincipal(s, "bob")

	aNotes := capsListen(t, alice, tasksCaps, "a", map[string]any{"tasks": true})
	ack := wantNote(t, aNotes, "notifications/subscriptions/acknowledged", "a")
	if string(ack.Notifications) != `{"tasks":true}` {
		t.Errorf("agreed %s, want tasks", ack.Notifications)
	}
	bNotes := capsListen(t, bob, tasksCaps, "b", map[string]any{"tasks": true})
	wantNote(t, bNotes, "notifications/subscriptions/acknowledged", "b")

	aliceTask := createTask(t, alice, "job", nil, tasksCaps)
	close(gate["alice"].release)
	n := wantTaskNote(t, aNotes, "a")
	if n.TaskID != aliceTask || n.Status != "completed" || len(n.Result) == 0 {
		t.Errorf("alice's notification = %+v, want her task completed with its result", n)
	}
	// Bob's stream hears of bob's task, never of alice's.
	bobTask := createTask(t, bob, "job", nil, tasksCaps)
	ackOf(t, bob, "tasks/cancel", bobTask, nil)
	n = wantTaskNote(t, bNotes, "b")
	if n.TaskID != bobTask || n.Status != "cancelled" {
		t.Errorf("bob's first notification = %+v, want his task cancelled", n)
	}
	close(gate["bob"].release)
	select {
	case extra := <-aNotes:
		t.Errorf("alice's stream heard %s %s", extra.Method, extra.Params)
	default:
	}

	// Without the extension: -32021.
	e := wantError(t, send(t, newClient(t, alice, ""), "subscriptions/listen", map[string]any{"notifications": map[string]any{"tasks": true}}), http.StatusBadRequest, mcp.MissingRequiredClientCapability)
	if e != nil && string(e.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("-32021 data = %s", e.Data)
	}
	// Anonymous: tasks not agreed.
	anon := capsListen(t, s, tasksCaps, "x", map[string]any{"tasks": true, "toolsListChanged": true})
	if ack := wantNote(t, anon, "notifications/subscriptions/acknowledged", "x"); string(ack.Notifications) != `{"toolsListChanged":true}` {
		t.Errorf("anonymous stream agreed %s, want no tasks", ack.Notifications)
	}
}
