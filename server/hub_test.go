package server

import (
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/baton-mcp/baton/internal/era"
)

// within runs f on its own goroutine and fails the test if it has not
// returned after waitLimit (a deadlock fails the test instead of hanging
// it).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%s did not return within %v: deadlock", what, waitLimit)
	}
}

// A watch callback that stops its own watch, and one that adds a tool, do
// not deadlock the change that called them, and are not called after stop.
func TestWatchCallbackCallsServer(t *testing.T) {
	s := newTestServer(t, nil)
	calls := make(chan era.Change, 8)
	var stop func()
	stopSet := make(chan struct{})
	stop = s.hub.watch(func(c era.Change) {
		<-stopSet
		stop()
		calls <- c
	})
	close(stopSet)
	added := make(chan era.Change, 8)
	s.hub.watch(func(c era.Change) {
		if c.Kind == era.PromptsChanged {
			textTool(s, t, "from-watcher", "x") // publishes again
		}
		added <- c
	})
	within(t, "AddPrompt", func() {
		if err := s.AddPrompt(Prompt{Name: "p"}, noopPrompt); err != nil {
			t.Error(err)
		}
	})
	if c := receive(t, calls, "the self-stopping callback"); c.Kind != era.PromptsChanged {
		t.Fatalf("first change %v", c.Kind)
	}
	if c := receive(t, added, "the adding callback"); c.Kind != era.PromptsChanged {
		t.Fatalf("first change %v", c.Kind)
	}
	if c := receive(t, added, "the adding callback"); c.Kind != era.ToolsChanged {
		t.Fatalf("the tool added from a callback reached watchers as %v", c.Kind)
	}
	within(t, "AddTool", func() { textTool(s, t, "after-stop", "x") })
	receive(t, added, "the change after stop")
	select {
	case c := <-calls:
		t.Fatalf("a stopped watch was called with %v", c)
	default:
	}
	within(t, "a second stop", stop)
}

// A blocked watch callback (a legacy stdio session whose stdout is not
// read) holds up nobody: the publisher returns, other publishers go on,
// other watchers and subscriptions/listen streams get their changes. Once
// it is unblocked it gets what was queued, in order, each change once.
func TestWatchBlockedCallback(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t0", "x") // a server with all three lists
	if err := s.AddPrompt(Prompt{Name: "p0"}, noopPrompt); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{URI: "file:///a", Name: "a"}, noopResource); err != nil {
		t.Fatal(err)
	}
	events := listenStream(t, s, "sub", map[string]any{"toolsListChanged": true, "promptsListChanged": true, "resourceSubscriptions": []string{"file:///a"}})
	wantNote(t, events, "notifications/subscriptions/acknowledged", "sub")

	release := make(chan struct{})
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	blocked := make(chan era.Change, 16)
	s.hub.watch(func(c era.Change) {
		blocked <- c
		<-release
	})
	other := make(chan era.Change, 16)
	s.hub.watch(func(c era.Change) { other <- c })

	within(t, "AddTool", func() { textTool(s, t, "t1", "x") })
	if c := receive(t, blocked, "the blocking callback"); c.Kind != era.ToolsChanged {
		t.Fatalf("first change %v", c.Kind)
	}
	// The blocking callback now sits in its first call.
	within(t, "publishers behind a blocked callback", func() {
		textTool(s, t, "t2", "x")
		if err := s.AddPrompt(Prompt{Name: "p"}, noopPrompt); err != nil {
			t.Error(err)
		}
		s.NotifyResourceUpdated("file:///a")
		s.NotifyResourceUpdated("file:///a")
		textTool(s, t, "t3", "x")
	})
	// The other watcher gets every kind (changes still waiting in its queue
	// may have merged).
	seen := map[era.ChangeKind]bool{era.ToolsChanged: false}
	for !seen[era.ToolsChanged] || !seen[era.PromptsChanged] || !seen[era.ResourceUpdated] {
		seen[receive(t, other, "the other callback").Kind] = true
	}
	got := map[string]bool{}
	for len(got) < 3 {
		got[receive(t, events, "a listen notification").Method] = true
	}
	for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/updated"} {
		if !got[m] {
			t.Fatalf("the listen stream missed %s (got %v)", m, got)
		}
	}

	close(release)
	var after []era.Change
	for range 3 {
		after = append(after, receive(t, blocked, "the unblocked callback"))
	}
	// In publication order; the second update and t3's change were still
	// waiting in the queue, so they were not queued twice.
	want := []era.Change{{Kind: era.ToolsChanged}, {Kind: era.PromptsChanged}, {Kind: era.ResourceUpdated, URI: "file:///a"}}
	if !slices.Equal(after, want) {
		t.Fatalf("queued changes delivered as %v, want %v", after, want)
	}
	within(t, "AddTool", func() { textTool(s, t, "t4", "x") })
	if c := receive(t, blocked, "the unblocked callback"); c.Kind != era.ToolsChanged {
		t.Fatalf("after the queue drained: %v", c)
	}
}

// stop drops what is queued, and after it returns the callback is handed
// nothing more; a panicking callback costs one change.
func TestWatchStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		var n atomic.Int32
		release := make(chan struct{})
		stop := s.hub.watch(func(era.Change) {
			n.Add(1)
			<-release
		})
		textTool(s, t, "a", "x")
		synctest.Wait() // the callback is blocked in its first call
		textTool(s, t, "b", "x")
		s.NotifyResourceUpdated("file:///a")
		stop()
		close(release)
		textTool(s, t, "c", "x")
		synctest.Wait()
		if n.Load() != 1 {
			t.Fatalf("called %d times, want once: queued changes survived stop", n.Load())
		}

		var calls []era.Change
		s.hub.watch(func(c era.Change) {
			calls = append(calls, c)
			if len(calls) == 1 {
				panic("watcher bug")
			}
		})
		textTool(s, t, "d", "x")
		synctest.Wait()
		s.NotifyResourceUpdated("file:///b")
		synctest.Wait()
		if len(calls) != 2 || calls[1].URI != "file:///b" {
			t.Fatalf("after a panic: %v", calls)
		}
	})
}
