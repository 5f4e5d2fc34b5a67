package legacy_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/server"
)

// seen is what a legacy client received on the stream of one call.
type seen struct {
	progress []float64
	logs     []string
	requests []string // method and the first property asked for
	result   json.RawMessage
}

// drive reads the stream of call id to its response, answering every
// server-to-client request with answer, and returns what it saw.
func drive(t *testing.T, c *wireClient, s *stream, id string, answer func(m message) any) seen {
	t.Helper()
	var out seen
	for {
		m := s.next()
		switch {
		case m.IsRequest():
			var p struct {
				RequestedSchema struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"requestedSchema"`
			}
			_ = json.Unmarshal(m.Params, &p)
			props := make([]string, 0, len(p.RequestedSchema.Properties))
			for k := range p.RequestedSchema.Properties {
				props = append(props, k)
			}
			slices.Sort(props)
			out.requests = append(out.requests, fmt.Sprint(m.Method, props))
			c.answer(m, answer(m))
		case m.IsNotification() && m.Method == "notifications/progress":
			var p struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress float64         `json:"progress"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil || string(p.Token) != `"tok"` {
				t.Fatalf("progress notification %s (%v), want token \"tok\"", m.Raw, err)
			}
			out.progress = append(out.progress, p.Progress)
		case m.IsNotification() && m.Method == "notifications/message":
			var p struct {
				Data string `json:"data"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatalf("log notification %s: %v", m.Raw, err)
			}
			out.logs = append(out.logs, p.Data)
		case m.IsResponse():
			if string(m.ID) != id || m.Error != nil {
				t.Fatalf("want the result of %s, got %s", id, m.Raw)
			}
			out.result = m.Result
			return out
		default:
			t.Fatalf("unexpected message %s", m.Raw)
		}
	}
}

// acceptAll answers every elicitation with a name and an age.
func acceptAll(message) any {
	return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": 36}}
}

// TestBridgeSendsEachNotificationOnce runs a handler that reports
// progress and logs around its questions and suspends twice (after asking
// the name, then after asking the age), saving how far it got: the bridge
// runs it three times, each run replaying what the one before did. The
// client must still see each notification once, progress strictly
// increasing, each question once, and the notifications that are new in
// a later run (including a second copy of one log line) all delivered.
func TestBridgeSendsEachNotificationOnce(t *testing.T) {
	srv := newServer(t)
	nameForm := form(t, "Your name?", elicit.String("name").Required())
	ageForm := form(t, "Your age?", elicit.Integer("age").Required())
	var runs atomic.Int32
	var mu sync.Mutex
	var rounds []int
	addTool(t, srv, "chatty", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		runs.Add(1)
		step := func(progress float64, log string) error {
			if err := req.Progress(ctx, progress, 3, log); err != nil {
				return err
			}
			return req.Log(ctx, slog.LevelInfo, "chatty", log)
		}
		var saved struct {
			Stage int `json:"stage"`
		}
		loaded, err := req.LoadState(&saved)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		rounds = append(rounds, req.Round())
		mu.Unlock()
		if loaded != (req.Round() > 1) {
			return nil, fmt.Errorf("round %d: LoadState found a state: %v", req.Round(), loaded)
		}
		if err := step(1, "asking the name"); err != nil {
			return nil, err
		}
		name, err := req.Elicit(ctx, nameForm, server.WithKey("name"))
		if err != nil {
			return nil, err
		}
		// Progress that goes back is never sent, in any run.
		if err := req.Progress(ctx, 0.5, 3, "back"); err != nil {
			return nil, err
		}
		if saved.Stage == 0 {
			if err := req.SaveState(map[string]int{"stage": 1}); err != nil {
				return nil, err
			}
			return nil, req.Suspend()
		}
		if err := step(2, "asking the age"); err != nil {
			return nil, err
		}
		age, err := req.Elicit(ctx, ageForm, server.WithKey("age"))
		if err != nil {
			return nil, err
		}
		if saved.Stage == 1 {
			if err := req.SaveState(map[string]int{"stage": 2}); err != nil {
				return nil, err
			}
			return nil, req.Suspend()
		}
		if err := step(3, "done"); err != nil {
			return nil, err
		}
		// A second copy of a line is a new notification.
		if err := req.Log(ctx, slog.LevelInfo, "chatty", "done"); err != nil {
			return nil, err
		}
		var n struct {
			Name string `json:"name"`
		}
		var a struct {
			Age int `json:"age"`
		}
		if err := errors.Join(name.Decode(&n), age.Decode(&a)); err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("ok %s %d", n.Name, a.Age)), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	c.call(1, "logging/setLevel", map[string]any{"level": "debug"})

	p := toolCall("chatty", nil)
	p["_meta"] = map[string]any{"progressToken": "tok"}
	got := drive(t, c, c.request(2, "tools/call", p), "2", acceptAll)

	if text, isErr := toolText(t, got.result); text != "ok Ada 36" || isErr {
		t.Errorf("result = %q (isError %v), want %q", text, isErr, "ok Ada 36")
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("the handler ran %d times, want 3 (the test relies on the re-runs)", n)
	}
	mu.Lock()
	if want := []int{1, 2, 3}; !slices.Equal(rounds, want) {
		t.Errorf("rounds = %v, want %v", rounds, want)
	}
	mu.Unlock()
	if want := []string{"elicitation/create[name]", "elicitation/create[age]"}; !slices.Equal(got.requests, want) {
		t.Errorf("requests = %q, want %q", got.requests, want)
	}
	if want := []float64{1, 2, 3}; !slices.Equal(got.progress, want) {
		t.Errorf("progress = %v, want %v", got.progress, want)
	}
	if want := []string{"asking the name", "asking the age", "done", "done"}; !slices.Equal(got.logs, want) {
		t.Errorf("logs = %q, want %q", got.logs, want)
	}
	noStateOnTheWire(t, c)

	// The memory is per request: a second call reports from the start.
	got = drive(t, c, c.request(3, "tools/call", p), "3", acceptAll)
	if want := []float64{1, 2, 3}; !slices.Equal(got.progress, want) {
		t.Errorf("second call: progress = %v, want %v", got.progress, want)
	}
	if len(got.logs) != 4 {
		t.Errorf("second call: logs = %q, want 4", got.logs)
	}
	if len(got.requests) != 2 {
		t.Errorf("second call: requests = %q, want both questions asked again", got.requests)
	}
}

// TestProgressFromGoroutines sends progress from several goroutines of
// one handler: whatever the scheduling, what reaches the client strictly
// increases.
func TestProgressFromGoroutines(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "busy", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for range 50 {
					if err := req.Progress(ctx, float64(next.Add(1)), 0, ""); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			return nil, err
		}
		return server.TextResult("ok"), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{}`)
	p := toolCall("busy", nil)
	p["_meta"] = map[string]any{"progressToken": "tok"}
	got := drive(t, c, c.request(1, "tools/call", p), "1", acceptAll)
	if len(got.progress) == 0 || got.progress[len(got.progress)-1] != 200 {
		t.Errorf("progress = %v, want it to end at 200", got.progress)
	}
	for i := 1; i < len(got.progress); i++ {
		if got.progress[i] <= got.progress[i-1] {
			t.Fatalf("progress goes from %v to %v: %v", got.progress[i-1], got.progress[i], got.progress)
		}
	}
}
