package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/baton-mcp/baton/content"
)

// listenStream opens subscriptions/listen on a live server and returns its
// events; the stream is closed when the test ends.
func listenStream(t *testing.T, url string, id any, filter map[string]any) <-chan event {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, url, call(id, "subscriptions/listen", map[string]any{"notifications": filter}))
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("listen: status %d Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return readEvents(resp.Body)
}

type listenNote struct {
	URI           string          `json:"uri"`
	Notifications json.RawMessage `json:"notifications"`
	Meta          map[string]any  `json:"_meta"`
}

// wantNote reads the next event and checks its method and subscription id.
func wantNote(t *testing.T, events <-chan event, method string, subID any) listenNote {
	t.Helper()
	ev := nextEvent(t, events)
	if ev.Method != method {
		t.Fatalf("event %s %s, want %s", ev.Method, ev.Params, method)
	}
	if ev.ID != nil {
		t.Errorf("notification has an id: %s", ev.ID)
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
	return &ResourceResult{Contents: []content.ResourceContents{content.TextContents(r.URI, "", "")}}, nil
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
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close) // after the streams' cleanups, which end the handlers

	// A wants tool changes and updates of file:///a; B wants prompt and
	// resource list changes. Each event below is meant for exactly one of
	// them; reading each stream's next event after every change proves
	// nothing else reached it first (pending changes are sent in a fixed
	// order: tools, prompts, resources, then updates).
	a := listenStream(t, ts.URL, "sub-a", map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///a"}})
	ack := wantNote(t, a, "notifications/subscriptions/acknowledged", "sub-a")
	if string(ack.Notifications) != `{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}` {
		t.Errorf("A agreed %s", ack.Notifications)
	}
	b := listenStream(t, ts.URL, 7, map[string]any{"promptsListChanged": true, "resourcesListChanged": true})
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
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	ev := listenStream(t, ts.URL, 1, map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": []string{"file:///x"}})
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
	wantErrorRec(t, do(t, empty, call(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}})), http.StatusNotFound, -32601, "1")

	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	wantErrorRec(t, do(t, s, call(2, "subscriptions/listen", nil)), http.StatusBadRequest, -32602, "2")
	wantErrorRec(t, do(t, s, call(3, "subscriptions/listen", map[string]any{"notifications": "all"})), http.StatusBadRequest, -32602, "3")
	wantErrorRec(t, do(t, s, call(4, "subscriptions/listen", map[string]any{"notifications": map[string]any{}}).without(HeaderMethod)), http.StatusBadRequest, -32020, "4")
}

func TestListenEndsWithClient(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	ts := httptest.NewServer(s)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, ts.URL, call(1, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	defer resp.Body.Close()
	ev := readEvents(resp.Body)
	wantNote(t, ev, "notifications/subscriptions/acknowledged", float64(1))
	if n := s.hub.count(); n != 1 {
		t.Fatalf("%d listeners, want 1", n)
	}
	cancel()
	// ts.Close waits for the handler to return; the listener is gone then.
	ts.Close()
	if n := s.hub.count(); n != 0 {
		t.Errorf("%d listeners after the client left", n)
	}
}
