package legacy_test

import (
	"context"
	"encoding/json"
	"fmt"
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
		case m.isRequest():
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
		case m.isNotification() && m.Method == "notifications/progress":
			var p struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress float64         `json:"progress"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil || string(p.Token) != `"tok"` {
				t.Fatalf("progress notification %s (%v), want token \"tok\"", m.raw, err)
			}
			out.progress = append(out.progress, p.Progress)
		case m.isNotification() && m.Method == "notifications/message":
			var p struct {
				Data string `json:"data"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatalf("log notification %s: %v", m.raw, err)
			}
			out.logs = append(out.logs, p.Data)
		case m.isResponse():
			if string(m.ID) != id || m.Error != nil {
				t.Fatalf("want the result of %s, got %s", id, m.raw)
			}
			out.result = m.Result
			return out
		default:
			t.Fatalf("unexpected message %s", m.raw)
		}
	}
}

// acceptAll answers every elicitation with a name and an age.
func acceptAll(message) any {
	return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": 36}}
}

// TestBridgeSendsEachNotificationOnce runs an MRTR handler that reports
// progress and logs before each of its two questions: the bridge runs it
// three times, and the client must still see each notification once,
// progress strictly increasing, and the notifications that are new in a
// later run (including a second copy of one log line) all delivered.
func TestBridgeSendsEachNotificationOnce(t *testing.T) {
	srv := newServer(t)
	nameForm := form(t, "Your name?", elicit.String("name").Required())
	ageForm := form(t, "Your age?", elicit.Integer("age").Required())
	var runs atomic.Int32
	addTool(t, srv, "chatty", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		runs.Add(1)
		step := func(progress float64, log string) error {
			if err := req.Progress(ctx, progress, 3, log); err != nil {
				return err
			}
			return req.Log(ctx, server.LevelInfo, "chatty", log)
		}
		if err := step(1, "asking the name"); err != nil {
			return nil, err
		}
		// The name answer is kept in the state; the age is asked next round.
		var saved struct {
			Name string `json:"name"`
		}
		loaded, err := req.LoadState(&saved)
		if err != nil {
			return nil, err
		}
		if !loaded {
			r, err := req.Elicit(ctx, nameForm, server.WithKey("name"))
			if err != nil {
				return nil, err
			}
			if err := r.Decode(&saved); err != nil {
				return nil, err
			}
			if err := req.SaveState(saved); err != nil {
				return nil, err
			}
		}
		// Progress that goes back is never sent, in any run.
		if err := req.Progress(ctx, 0.5, 3, "back"); err != nil {
			return nil, err
		}
		if err := step(2, "asking the age"); err != nil {
			return nil, err
		}
		if _, err := req.Elicit(ctx, ageForm, server.WithKey("age")); err != nil {
			return nil, err
		}
		if err := step(3, "done"); err != nil {
			return nil, err
		}
		// A second copy of a line is a new notification.
		if err := req.Log(ctx, server.LevelInfo, "chatty", "done"); err != nil {
			return nil, err
		}
		return server.TextResult("ok " + saved.Name), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)
	c.call(1, "logging/setLevel", map[string]any{"level": "debug"})

	p := toolCall("chatty", nil)
	p["_meta"] = map[string]any{"progressToken": "tok"}
	got := drive(t, c, c.request(2, "tools/call", p), "2", acceptAll)

	if text, isErr := toolText(t, got.result); text != "ok Ada" || isErr {
		t.Errorf("result = %q (isError %v), want %q", text, isErr, "ok Ada")
	}
	if n := runs.Load(); n != 3 {
		t.Errorf("the handler ran %d times, want 3 (the test relies on the re-runs)", n)
	}
	if want := []string{"elicitation/create[name]", "elicitation/create[age]"}; !slices.Equal(got.requests, want) {
		t.Errorf("requests = %q, want %q", got.requests, want)
	}
	if want := []float64{1, 2, 3}; !slices.Equal(got.progress, want) {
		t.Errorf("progress = %v, want %v", got.progress, want)
	}
	if want := []string{"asking the name", "asking the age", "done", "done"}; !slices.Equal(got.logs, want) {
		t.Errorf("logs = %q, want %q", got.logs, want)
	}

	// The memory is per request: a second call reports from the start.
	got = drive(t, c, c.request(3, "tools/call", p), "3", acceptAll)
	if want := []float64{1, 2, 3}; !slices.Equal(got.progress, want) {
		t.Errorf("second call: progress = %v, want %v", got.progress, want)
	}
	if len(got.logs) != 4 {
		t.Errorf("second call: logs = %q, want 4", got.logs)
	}
}

// TestBridgeKeepsBlockingAnswers mixes the two styles: a blocking question
// (a real round trip on a legacy session), then an MRTR one, which makes
// the bridge run the handler again. The blocking question must not reach
// the client twice; the re-run gets the answer the client gave.
func TestBridgeKeepsBlockingAnswers(t *testing.T) {
	srv := newServer(t)
	nameSchema := nameSchema(t)
	ageForm := form(t, "Your age?", elicit.Integer("age").Required())
	otherSchema, err := elicit.NewSchema(elicit.String("city").Required())
	if err != nil {
		t.Fatal(err)
	}
	addTool(t, srv, "mixed", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		name, err := req.CreateFormElicitation(ctx, "Your name?", nameSchema)
		if err != nil {
			return nil, err
		}
		var n struct {
			Name string `json:"name"`
		}
		if err := name.Decode(&n); err != nil {
			return nil, err
		}
		age, err := req.Elicit(ctx, ageForm, server.WithKey("age"))
		if err != nil {
			return nil, err
		}
		var a struct {
			Age int `json:"age"`
		}
		if err := age.Decode(&a); err != nil {
			return nil, err
		}
		// A blocking question first reached in this run is asked.
		city, err := req.CreateFormElicitation(ctx, "Your city?", otherSchema)
		if err != nil {
			return nil, err
		}
		var ci struct {
			City string `json:"city"`
		}
		if err := city.Decode(&ci); err != nil {
			return nil, err
		}
		return server.TextResult(fmt.Sprintf("%s, %d, %s", n.Name, a.Age, ci.City)), nil
	})
	f := newFixture(t, srv)
	c := connect(t, f, `{"elicitation":{}}`)

	names := 0
	got := drive(t, c, c.request(1, "tools/call", toolCall("mixed", nil)), "1", func(m message) any {
		var p struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(m.Params, &p)
		switch p.Message {
		case "Your name?":
			names++
			// A different answer each time: a repeated question would
			// show in the result.
			return map[string]any{"action": "accept", "content": map[string]any{"name": fmt.Sprint("Ada", names)}}
		case "Your age?":
			return map[string]any{"action": "accept", "content": map[string]any{"age": 36}}
		}
		return map[string]any{"action": "accept", "content": map[string]any{"city": "London"}}
	})
	if want := []string{"elicitation/create[name]", "elicitation/create[age]", "elicitation/create[city]"}; !slices.Equal(got.requests, want) {
		t.Errorf("requests = %q, want %q", got.requests, want)
	}
	if text, _ := toolText(t, got.result); text != "Ada1, 36, London" {
		t.Errorf("result = %q, want %q", text, "Ada1, 36, London")
	}
}

// TestBridgeProgressFromGoroutines sends progress from several goroutines
// of one handler: whatever the scheduling, what reaches the client
// strictly increases.
func TestBridgeProgressFromGoroutines(t *testing.T) {
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
