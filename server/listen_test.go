package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// listenStream opens subscriptions/listen with filter, under JSON-RPC id
// id, through mcptest on a loopback server of its own in front of h, and
// returns its notifications as they arrive. The stream must open with 200
// and text/event-stream; it is closed when the test ends, and must not end
// before (a message mcptest refuses, such as a request, would end it).
func listenStream(t *testing.T, h http.Handler, id any, filter map[string]any) <-chan mcptest.Notification {
	t.Helper()
	heads := make(chan responseHead, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&headWatch{ResponseWriter: w, heads: heads}, r)
	}))
	t.Cleanup(ts.Close) // after the stream's cleanup below, which ends the handler
	notes := make(chan mcptest.Notification, 64)
	c := newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{OnNotification: func(n mcptest.Notification) { notes <- n }})
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
		select {
		case err := <-ended:
			t.Errorf("the listen stream ended before the test: %v", err)
		default:
		}
		cancel()
		receive(t, ended, "the listen request to end")
	})
	head := receive(t, heads, "the listen stream to open")
	if head.status != http.StatusOK || head.contentType != "text/event-stream" {
		t.Fatalf("listen: status %d Content-Type %q", head.status, head.contentType)
	}
	return notes
}

// responseHead is the status and Content-Type a handler answered with.
type responseHead struct {
	status      int
	contentType string
}

// headWatch reports the status and Content-Type of the response once they
// are sent; Unwrap lets http.ResponseController flush underneath.
type headWatch struct {
	http.ResponseWriter
	once  sync.Once
	heads chan<- responseHead
}

func (w *headWatch) commit(status int) {
	w.once.Do(func() { w.heads <- responseHead{status, w.Header().Get("Content-Type")} })
}

func (w *headWatch) WriteHeader(status int) {
	w.commit(status)
	w.ResponseWriter.WriteHeader(status)
}

func (w *headWatch) Write(p []byte) (int, error) {
	w.commit(http.StatusOK)
	return w.ResponseWriter.Write(p)
}

func (w *headWatch) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type listenNote struct {
	URI           string          `json:"uri"`
	Notifications json.RawMessage `json:"notifications"`
	Meta          map[string]any  `json:"_meta"`
}

// wantNote reads the next notification and checks its method and
// subscription id.
func wantNote(t *testing.T, notes <-chan mcptest.Notification, method string, subID any) listenNote {
	t.Helper()
	ev := receive(t, notes, method)
	if ev.Method != method {
		t.Fatalf("event %s %s, want %s", ev.Method, ev.Params, method)
	}
	var n listenNote
	if err := json.Unmarshal(ev.Params, &n); err != nil {
		t.Fatal(err)
	}
	if got := n.Meta[metaSubscriptionID]; got != subID {
		t.Errorf("%s: subscriptionId = %#v, want %#v", method, got, subID)
	}
	return n
}

func noopPrompt(context.Context, *PromptRequest) (*PromptResult, error) {
	return &PromptResult{}, nil
}

func noopResource(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
	return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(r.URI, "", "")}}, nil
}

func TestListenHTTP(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	if err := s.AddPrompt(Prompt{Name: "p1"}, noopPrompt); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{URI: "file:///a", Name: "a"}, noopResource); err != nil {
		t.Fatal(err)
	}
	// A wants tool changes and updates of file:///a; B wants prompt and
	// resource list changes. Each event below is meant for exactly one of
	// them; reading each stream's next event after every change proves
	// nothing else reached it first (pending changes are sent in a fixed
	// order: tools, prompts, resources, then updates).
	a := listenStream(t, s, "sub-a", map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///a"}})
	ack := wantNote(t, a, "notifications/subscriptions/acknowledged", "sub-a")
	if string(ack.Notifications) != `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}` {
		t.Errorf("A agreed %s", ack.Notifications)
	}
	b := listenStream(t, s, 7, map[string]any{"promptsListChanged": true, "resourcesListChanged": true})
	ack = wantNote(t, b, "notifications/subscriptions/acknowledged", float64(7))
	if string(ack.Notifications) != `{"promptsListChanged":true,"resourcesListChanged":true}` {
		t.Errorf("B agreed %s", ack.Notifications)
	}

	textTool(s, t, "t2", "x")
	wantNote(t, a, "notifications/tools/list_changed", "sub-a")

	if err := s.AddPrompt(Prompt{Name: "p2"}, noopPrompt); err != nil {
		t.Fatal(err)
	}
	wantNote(t, b, "notifications/prompts/list_changed", float64(7))

	s.NotifyResourceUpdated("file:///b")
	s.NotifyResourceUpdated("file:///a")
	if n := wantNote(t, a, "notifications/resources/updated", "sub-a"); n.URI != "file:///a" {
		t.Errorf("updated uri = %q", n.URI)
	}

	if err := s.AddResource(Resource{URI: "file:///c", Name: "c"}, noopResource); err != nil {
		t.Fatal(err)
	}
	wantNote(t, b, "notifications/resources/list_changed", float64(7))

	if !s.RemoveTool("t2") {
		t.Fatal("RemoveTool")
	}
	wantNote(t, a, "notifications/tools/list_changed", "sub-a")

	if !s.RemovePrompt("p2") {
		t.Fatal("RemovePrompt")
	}
	wantNote(t, b, "notifications/prompts/list_changed", float64(7))

	if !s.RemoveResource("file:///c") {
		t.Fatal("RemoveResource")
	}
	wantNote(t, b, "notifications/resources/list_changed", float64(7))
	s.NotifyResourceUpdated("file:///a")
	wantNote(t, a, "notifications/resources/updated", "sub-a")
}

func TestListenAgreedSubset(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	ev := listenStream(t, s, 1, map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []string{"file:///x"}})
	ack := wantNote(t, ev, "notifications/subscriptions/acknowledged", float64(1))
	var got map[string]any
	if err := json.Unmarshal(ack.Notifications, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, map[string]any{"toolsListChanged": true}) {
		t.Errorf("agreed %s, want only toolsListChanged", ack.Notifications)
	}
	// Resources appear later: the agreed filter does not grow.
	if err := s.AddResource(Resource{URI: "file:///x", Name: "x"}, noopResource); err != nil {
		t.Fatal(err)
	}
	s.NotifyResourceUpdated("file:///x")
	textTool(s, t, "t2", "x")
	wantNote(t, ev, "notifications/tools/list_changed", float64(1))
}

func TestListenErrors(t *testing.T) {
	empty := newTestServer(t, nil)
	wantError(t, send(t, newClient(t, empty, ""), "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}), http.StatusNotFound, -32601)

	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	c := newClient(t, s, "")
	wantError(t, send(t, c, "subscriptions/listen", nil), http.StatusBadRequest, -32602)
	wantError(t, send(t, c, "subscriptions/listen", map[string]any{"notifications": "all"}), http.StatusBadRequest, -32602)
	wantError(t, send(t, c, "subscriptions/listen", map[string]any{"notifications": map[string]any{}}, mcptest.WithoutHeader(headerMethod)), http.StatusBadRequest, -32020)
}

func TestListenEndsWithClient(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	ts := httptest.NewServer(s)
	defer ts.Close()
	acked := make(chan mcptest.Notification, 1)
	c := newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{OnNotification: func(n mcptest.Notification) { acked <- n }})
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		_, _ = c.Do(ctx, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	}()
	if n := receive(t, acked, "the acknowledgement"); n.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first notification %s", n.Method)
	}
	if n := s.hub.count(); n != 1 {
		t.Fatalf("%d listeners, want 1", n)
	}
	cancel()
	receive(t, ended, "the client to leave")
	// ts.Close waits for the handler to return; the listener is gone then.
	ts.Close()
	if n := s.hub.count(); n != 0 {
		t.Errorf("%d listeners after the client left", n)
	}
}
