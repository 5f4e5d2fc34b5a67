package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/jsonrpc"
)

type progressNote struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total"`
	Message       string          `json:"message"`
}

func TestProgressStreamsLive(t *testing.T) {
	s := newTestServer(t, nil)
	release := make(chan struct{})
	sendErr := make(chan error, 1)
	mustAddTool(t, s, Tool{Name: "slow"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, "half way"); err != nil {
			return nil, err
		}
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := req.Progress(ctx, 2, 0, ""); err != nil {
			return nil, err
		}
		res := TextResult("finished")
		// After the handler returns, the stream is closed for it.
		go func() { <-ctx.Done(); sendErr <- req.Progress(context.Background(), 3, 0, "") }()
		return res, nil
	})
	ts := httptest.NewServer(s)
	defer ts.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := post(t, ctx, ts.URL, toolCall("c1", "slow", nil).withMeta("progressToken", "tok-1"))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	events := readEvents(resp.Body)

	// The first progress event arrives while the handler is still blocked:
	// it is streamed live, not buffered until the end.
	ev := nextEvent(t, events)
	var p progressNote
	if ev.Method != "notifications/progress" || ev.ID != nil || json.Unmarshal(ev.Params, &p) != nil {
		t.Fatalf("first event = %+v", ev)
	}
	if string(p.ProgressToken) != `"tok-1"` || p.Progress != 1 || p.Total == nil || *p.Total != 2 || p.Message != "half way" {
		t.Errorf("progress = %s", ev.Params)
	}
	close(release)

	ev = nextEvent(t, events)
	if ev.Method != "notifications/progress" || strings.Contains(string(ev.Params), "total") || strings.Contains(string(ev.Params), "message") {
		t.Errorf("second event = %s %s (total and message must be omitted when zero)", ev.Method, ev.Params)
	}
	ev = nextEvent(t, events)
	if string(ev.ID) != `"c1"` || ev.Result == nil {
		t.Fatalf("final event = %+v", ev)
	}
	res := decodeObject(t, ev.Result)
	if text, _ := toolText(t, res); text != "finished" || res["resultType"] != "complete" {
		t.Errorf("result = %v", res)
	}
	wantStreamEnd(t, events)
	if err := receive(t, sendErr, "late progress"); !errors.Is(err, errStreamClosed) {
		t.Errorf("progress after the response: %v, want errStreamClosed", err)
	}
}

func TestProgressWithoutToken(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "p"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 1, "x"); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	})
	rec := do(t, s, toolCall(1, "p", nil))
	completeResultRec(t, rec, "1") // plain JSON: nothing to stream
}

func TestPlainJSONWithoutEventStream(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "p"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, "x"); err != nil {
			return nil, err
		}
		if err := req.Log(ctx, LevelError, "l", "boom"); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	})
	for _, accept := range []string{"application/json", "", "text/html, application/json;q=0.9"} {
		rec := do(t, s, toolCall(1, "p", nil).withAccept(accept).withMeta("progressToken", 5).withMeta("io.modelcontextprotocol/logLevel", "debug"))
		res := completeResultRec(t, rec, "1")
		if text, _ := toolText(t, res); text != "done" {
			t.Errorf("Accept %q: result %v", accept, res)
		}
	}
	// Wildcards accept SSE.
	rec := do(t, s, toolCall(1, "p", nil).withAccept("*/*").withMeta("progressToken", 5))
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Accept */*: Content-Type %q", ct)
	}
}

func TestLogNotifications(t *testing.T) {
	s := newTestServer(t, &Options{Logging: true})
	mustAddTool(t, s, Tool{Name: "chatty"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		for _, l := range []LogLevel{LevelDebug, LevelInfo, LevelNotice, LevelError, LevelEmergency} {
			if err := req.Log(ctx, l, "chatty", map[string]any{"level": string(l)}); err != nil {
				return nil, err
			}
		}
		return TextResult("done"), nil
	})

	t.Run("threshold notice", func(t *testing.T) {
		rec := do(t, s, toolCall(1, "chatty", nil).withMeta("io.modelcontextprotocol/logLevel", "notice"))
		if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		events := readEvents(rec.Body)
		for _, want := range []string{"notice", "error", "emergency"} {
			ev := nextEvent(t, events)
			var p struct {
				Level  string         `json:"level"`
				Logger string         `json:"logger"`
				Data   map[string]any `json:"data"`
			}
			if ev.Method != "notifications/message" || json.Unmarshal(ev.Params, &p) != nil {
				t.Fatalf("event = %+v", ev)
			}
			if p.Level != want || p.Logger != "chatty" || p.Data["level"] != want {
				t.Errorf("log = %s, want level %s", ev.Params, want)
			}
		}
		ev := nextEvent(t, events)
		if string(ev.ID) != "1" || ev.Result == nil {
			t.Errorf("final event = %+v", ev)
		}
		wantStreamEnd(t, events)
	})
	t.Run("no logLevel, no log notifications", func(t *testing.T) {
		completeResultRec(t, do(t, s, toolCall(2, "chatty", nil)), "2")
	})
	t.Run("threshold emergency", func(t *testing.T) {
		rec := do(t, s, toolCall(3, "chatty", nil).withMeta("io.modelcontextprotocol/logLevel", "emergency"))
		events := readEvents(rec.Body)
		if ev := nextEvent(t, events); ev.Method != "notifications/message" || !strings.Contains(string(ev.Params), `"level":"emergency"`) {
			t.Errorf("event = %s %s", ev.Method, ev.Params)
		}
		if ev := nextEvent(t, events); string(ev.ID) != "3" {
			t.Errorf("final event = %+v", ev)
		}
		wantStreamEnd(t, events)
	})
}

func TestErrorAfterStreaming(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "p"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 0, ""); err != nil {
			return nil, err
		}
		return nil, &jsonrpcErr{code: -32602, msg: "late failure"}
	})
	rec := do(t, s, toolCall(1, "p", nil).withMeta("progressToken", "t"))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d Content-Type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	events := readEvents(rec.Body)
	if ev := nextEvent(t, events); ev.Method != "notifications/progress" {
		t.Fatalf("event = %+v", ev)
	}
	ev := nextEvent(t, events)
	if ev.Error == nil || ev.Error.Code != -32602 || ev.Error.Message != "late failure" || string(ev.ID) != "1" {
		t.Errorf("final event = %+v", ev)
	}
	wantStreamEnd(t, events)
}

// jsonrpcErr chooses its wire form through the RPCError method.
type jsonrpcErr struct {
	code int
	msg  string
}

func (e *jsonrpcErr) Error() string { return e.msg }

func (e *jsonrpcErr) RPCError() *jsonrpc.Error { return &jsonrpc.Error{Code: e.code, Message: e.msg} }

func TestClientDisconnectCancels(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := "plain JSON"
		if stream {
			name = "SSE"
		}
		t.Run(name, func(t *testing.T) {
			s := newTestServer(t, nil)
			started := make(chan struct{})
			cancelled := make(chan error, 1)
			mustAddTool(t, s, Tool{Name: "wait"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
				if stream {
					if err := req.Progress(ctx, 1, 0, "started"); err != nil {
						return nil, err
					}
				}
				close(started)
				<-ctx.Done()
				cancelled <- ctx.Err()
				return TextResult("too late"), nil
			})
			ts := httptest.NewServer(s)
			defer ts.Close()

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := toolCall(1, "wait", nil).withMeta("progressToken", 1)
			r, err := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(string(c.encode(t))))
			if err != nil {
				t.Fatal(err)
			}
			c.applyHeaders(r.Header)
			done := make(chan struct{})
			go func() {
				defer close(done)
				resp, err := http.DefaultClient.Do(r)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			receive(t, started, "the handler to start")
			cancel()
			if err := receive(t, cancelled, "the handler's context to end"); !errors.Is(err, context.Canceled) {
				t.Errorf("ctx.Err() = %v, want context.Canceled", err)
			}
			receive(t, done, "the client to return")
		})
	}
}
