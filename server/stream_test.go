package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
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
	tap := newBodyTap(s)
	ts := httptest.NewServer(tap)
	defer ts.Close()

	// The handler blocks until the client has seen the first progress
	// event: it is streamed live, not buffered until the end (if it were,
	// the call would only end at the wait limit).
	var seen int
	c := newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), &mcptest.Options{OnNotification: func(mcptest.Notification) {
		if seen++; seen == 1 {
			close(release)
		}
	}})
	r := sendTool(t, c, "slow", nil, mcptest.WithProgressToken("tok-1"))
	if r.Status != http.StatusOK || !r.Streamed {
		t.Fatalf("status %d, streamed %v", r.Status, r.Streamed)
	}
	for k, v := range map[string]string{"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"} {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(r.Notifications) != 2 {
		t.Fatalf("%d notifications before the response, want 2: %+v", len(r.Notifications), r.Notifications)
	}
	ev := r.Notifications[0]
	var p progressNote
	if ev.Method != "notifications/progress" || json.Unmarshal(ev.Params, &p) != nil {
		t.Fatalf("first event = %+v", ev)
	}
	if string(p.ProgressToken) != `"tok-1"` || p.Progress != 1 || p.Total == nil || *p.Total != 2 || p.Message != "half way" {
		t.Errorf("progress = %s", ev.Params)
	}
	ev = r.Notifications[1]
	if ev.Method != "notifications/progress" || strings.Contains(string(ev.Params), "total") || strings.Contains(string(ev.Params), "message") {
		t.Errorf("second event = %s %s (total and message must be omitted when zero)", ev.Method, ev.Params)
	}
	res := decodeObject(t, r.Result)
	if text, _ := toolText(t, res); text != "finished" || res["resultType"] != "complete" {
		t.Errorf("result = %v", res)
	}
	wantStreamEnded(t, tap, 1)
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
	completeResult(t, sendTool(t, newClient(t, s, ""), "p", nil)) // plain JSON: nothing to stream
}

func TestPlainJSONWithoutEventStream(t *testing.T) {
	s := newTestServer(t, nil)
	mustAddTool(t, s, Tool{Name: "p"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, "x"); err != nil {
			return nil, err
		}
		if err := req.Log(ctx, slog.LevelError, "l", "boom"); err != nil {
			return nil, err
		}
		return TextResult("done"), nil
	})
	c := newClient(t, s, "")
	for _, accept := range []string{"application/json", "", "text/html, application/json;q=0.9"} {
		a := mcptest.WithHeader("Accept", accept)
		if accept == "" {
			a = mcptest.WithoutHeader("Accept")
		}
		res := completeResult(t, sendTool(t, c, "p", nil, a, mcptest.WithProgressToken(5), mcptest.WithLogLevel("debug")))
		if text, _ := toolText(t, res); text != "done" {
			t.Errorf("Accept %q: result %v", accept, res)
		}
	}
	// Wildcards accept SSE.
	r := sendTool(t, c, "p", nil, mcptest.WithHeader("Accept", "*/*"), mcptest.WithProgressToken(5))
	if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" || !r.Streamed {
		t.Errorf("Accept */*: Content-Type %q", ct)
	}
}

func TestLogNotifications(t *testing.T) {
	s := newTestServer(t, &Options{Logging: true})
	mustAddTool(t, s, Tool{Name: "chatty"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		for _, l := range []struct {
			level slog.Level
			name  string
		}{{slog.LevelDebug, "debug"}, {slog.LevelInfo, "info"}, {slog.LevelInfo + 2, "notice"}, {slog.LevelError, "error"}, {slog.LevelError + 12, "emergency"}} {
			if err := req.Log(ctx, l.level, "chatty", map[string]any{"level": l.name}); err != nil {
				return nil, err
			}
		}
		return TextResult("done"), nil
	})
	tap := newBodyTap(s)
	c := newClientOpts(t, mcptest.Handler(tap), nil)
	served := 0

	t.Run("threshold notice", func(t *testing.T) {
		r := sendTool(t, c, "chatty", nil, mcptest.WithLogLevel("notice"))
		served++
		if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		if len(r.Notifications) != 3 {
			t.Fatalf("%d notifications, want 3: %+v", len(r.Notifications), r.Notifications)
		}
		for i, want := range []string{"notice", "error", "emergency"} {
			ev := r.Notifications[i]
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
		if r.Result == nil {
			t.Errorf("final event = %s", r.Body)
		}
		wantStreamEnded(t, tap, served)
	})
	t.Run("no logLevel, no log notifications", func(t *testing.T) {
		completeResult(t, sendTool(t, c, "chatty", nil))
		served++
	})
	t.Run("threshold emergency", func(t *testing.T) {
		r := sendTool(t, c, "chatty", nil, mcptest.WithLogLevel("emergency"))
		served++
		if len(r.Notifications) != 1 || r.Notifications[0].Method != "notifications/message" || !strings.Contains(string(r.Notifications[0].Params), `"level":"emergency"`) {
			t.Errorf("events = %+v", r.Notifications)
		}
		if r.Result == nil {
			t.Errorf("final event = %s", r.Body)
		}
		wantStreamEnded(t, tap, served)
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
	tap := newBodyTap(s)
	r := sendTool(t, newClientOpts(t, mcptest.Handler(tap), nil), "p", nil, mcptest.WithProgressToken("t"))
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d Content-Type %q", r.Status, r.Header.Get("Content-Type"))
	}
	if len(r.Notifications) != 1 || r.Notifications[0].Method != "notifications/progress" {
		t.Fatalf("events = %+v", r.Notifications)
	}
	if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "late failure" || string(r.ID) == "null" {
		t.Errorf("final event = %s", r.Body)
	}
	wantStreamEnded(t, tap, 1)
}

// jsonrpcErr chooses its wire form through the RPCError method.
type jsonrpcErr struct {
	code int
	msg  string
}

func (e *jsonrpcErr) Error() string { return e.msg }

func (e *jsonrpcErr) RPCError() *mcp.Error { return &mcp.Error{Code: e.code, Message: e.msg} }

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
			c := newClientOpts(t, mcptest.URL(ts.URL, ts.Client()), nil)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = c.Do(ctx, "tools/call", map[string]any{"name": "wait"}, mcptest.WithProgressToken(1))
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
