package lambda

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/server"
)

// failsafe bounds how long a tool in these tests waits to be released: if
// the adapter held the stream back, the tool gives up after it, the
// handler returns and the test fails on what it read, rather than hang.
const failsafe = 20 * time.Second

// gate lets a test release a blocked tool one step at a time.
type gate chan struct{}

// wait blocks until the test releases the tool or the invocation ends.
func (g gate) wait(ctx context.Context) error {
	select {
	case <-g:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("never released: %w", ctx.Err())
	}
}

// open lets the blocked tool take its next step; it fails the test if the
// tool is no longer waiting.
func (g gate) open(ctx context.Context, t *testing.T) {
	t.Helper()
	select {
	case g <- struct{}{}:
	case <-ctx.Done():
		t.Fatal("the tool was not waiting to be released")
	}
}

// streamCall is the recorded round-1 function URL event with its body
// replaced by a tools/call of tool with the given params members.
func streamCall(t *testing.T, id int, tool string, params map[string]any) *events.LambdaFunctionURLRequest {
	t.Helper()
	var ev events.LambdaFunctionURLRequest
	load(t, "function-url-round1.json", &ev)
	p := map[string]any{
		"name": tool,
		"_meta": map[string]any{
			"progressToken":                              "p1",
			"io.modelcontextprotocol/logLevel":           "info",
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
		},
	}
	for k, v := range params {
		p[k] = v
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p})
	if err != nil {
		t.Fatal(err)
	}
	ev.Body, ev.IsBase64Encoded = string(body), false
	ev.Headers["content-length"] = fmt.Sprint(len(body))
	ev.Headers["mcp-name"] = tool
	return &ev
}

// sseStream reads a streaming response incrementally.
type sseStream struct {
	t  *testing.T
	br *bufio.Reader
}

// openStream reads the prelude of a streaming response and checks that it
// opens an SSE stream.
func openStream(t *testing.T, res *events.LambdaFunctionURLStreamingResponse) *sseStream {
	t.Helper()
	br := bufio.NewReader(res)
	head, err := readPrelude(br)
	if err != nil {
		t.Fatal(err)
	}
	if head.Status != http.StatusOK || head.Headers["Content-Type"] != "text/event-stream" {
		t.Fatalf("prelude: status %d, headers %q; want 200 text/event-stream", head.Status, head.Headers)
	}
	return &sseStream{t: t, br: br}
}

// next reads one SSE event and returns its JSON-RPC message.
func (s *sseStream) next() map[string]json.RawMessage {
	s.t.Helper()
	var data strings.Builder
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading an event: %v (read %q)", err, line)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" && data.Len() > 0 {
			break
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data.WriteString(d)
		}
	}
	var msg map[string]json.RawMessage
	if err := json.Unmarshal([]byte(data.String()), &msg); err != nil {
		s.t.Fatalf("event %q: %v", data.String(), err)
	}
	return msg
}

// notification reads the next event and checks it is the notification
// method whose params contain want.
func (s *sseStream) notification(method, want string) {
	s.t.Helper()
	msg := s.next()
	if got := string(msg["method"]); got != `"`+method+`"` || !strings.Contains(string(msg["params"]), want) {
		s.t.Fatalf("event %s %s, want %s with %s", msg["method"], msg["params"], method, want)
	}
}

// end checks that the stream ends cleanly after the last event.
func (s *sseStream) end() {
	s.t.Helper()
	if rest, err := io.ReadAll(s.br); err != nil || len(rest) != 0 {
		s.t.Fatalf("after the final event: %q, %v", rest, err)
	}
}

// quietLogs sends the default logger's output (the adapter's panic
// reports) to the test log for the rest of the test.
func quietLogs(t *testing.T) {
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// finished wraps h and records when it has returned.
func finished(h http.Handler, done *atomic.Bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		done.Store(true)
	})
}

// TestStreamNotificationsLive: in the RESPONSE_STREAM mode each progress
// and log notification reaches the reader while the tool is still blocked,
// before the handler returns; the final response comes last.
func TestStreamNotificationsLive(t *testing.T) {
	srv := newServer(t, urlDomain)
	release := make(gate)
	err := srv.AddTool(server.Tool{Name: "count"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		for i := 1; i <= 3; i++ {
			if err := req.Progress(ctx, float64(i), 3, ""); err != nil {
				return nil, err
			}
			if err := req.Log(ctx, server.LevelInfo, "count", fmt.Sprintf("step %d", i)); err != nil {
				return nil, err
			}
			if err := release.wait(ctx); err != nil {
				return nil, err
			}
		}
		return server.TextResult("counted"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()
	var done atomic.Bool
	res, err := FunctionURLStream(finished(srv, &done))(ctx, streamCall(t, 7, "count", nil))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	s := openStream(t, res)
	for i := 1; i <= 3; i++ {
		s.notification("notifications/progress", fmt.Sprintf(`"progress":%d`, i))
		s.notification("notifications/message", fmt.Sprintf(`"step %d"`, i))
		if done.Load() {
			t.Fatalf("step %d: the handler returned before its notifications were read", i)
		}
		release.open(ctx, t) // the tool was blocked until now
	}
	final := s.next()
	if string(final["id"]) != "7" || !strings.Contains(string(final["result"]), `"counted"`) {
		t.Fatalf("final event: %s", final)
	}
	s.end()
	if !done.Load() {
		t.Error("the stream ended before the handler returned")
	}
}

// newSurveyInstance is one cold instance with the survey tool: it reports
// progress, waits for release in round 1, then asks a name; round 2 reports
// progress again and greets.
func newSurveyInstance(t *testing.T, release gate) *server.Server {
	t.Helper()
	srv := newServer(t, urlDomain)
	ask, err := elicit.NewForm("What is your name?", elicit.String("name").MinLength(1).Required())
	if err != nil {
		t.Fatal(err)
	}
	err = srv.AddTool(server.Tool{Name: "survey"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		first := req.Round() == 1
		if err := req.Progress(ctx, 1, 2, "asking"); err != nil {
			return nil, err
		}
		if first {
			if err := release.wait(ctx); err != nil {
				return nil, err
			}
		}
		answer, err := req.Elicit(ctx, ask, server.WithKey("name"))
		if err != nil {
			return nil, err // input_required in round 1
		}
		var a struct {
			Name string `json:"name"`
		}
		if answer.Decode(&a) != nil {
			return server.ErrorResult("No name given"), nil
		}
		if err := req.Progress(ctx, 2, 2, "answered"); err != nil {
			return nil, err
		}
		return server.TextResult("Hello, " + a.Name + "!"), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestStreamMRTRAcrossColdInstances runs a two-round flow whose rounds
// both stream a notification before their result, each round on a new
// instance sharing only the state key.
func TestStreamMRTRAcrossColdInstances(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failsafe)
	defer cancel()

	// Round 1, instance A: progress while the tool is blocked, then
	// input_required.
	release := make(gate)
	var done atomic.Bool
	res, err := FunctionURLStream(finished(newSurveyInstance(t, release), &done))(ctx, streamCall(t, 1, "survey", nil))
	if err != nil {
		t.Fatal(err)
	}
	s := openStream(t, res)
	s.notification("notifications/progress", `"asking"`)
	if done.Load() {
		t.Fatal("round 1: the handler returned before its notification was read")
	}
	release.open(ctx, t)
	r1 := s.next()
	s.end()
	_ = res.Close()
	var result struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(r1["result"], &result); err != nil || result.ResultType != "input_required" || strings.Count(result.RequestState, ".") != 2 {
		t.Fatalf("round 1 result: %s", r1)
	}

	// Round 2, instance B: the answer, progress, the greeting.
	res, err = FunctionURLStream(newSurveyInstance(t, nil))(ctx, streamCall(t, 2, "survey", map[string]any{
		"requestState":   result.RequestState,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	s = openStream(t, res)
	s.notification("notifications/progress", `"asking"`)
	s.notification("notifications/progress", `"answered"`)
	r2 := s.next()
	s.end()
	out := rpcResponse{ID: r2["id"], Error: nil}
	if err := json.Unmarshal(r2["result"], &out.Result); err != nil {
		t.Fatalf("round 2: %s", r2)
	}
	if got, isErr := toolText(t, out); got != "Hello, Ada!" || isErr || string(out.ID) != "2" {
		t.Fatalf("round 2: %q (isError %v), id %s", got, isErr, out.ID)
	}
}

// TestStreamHandlerFailures: a panic after the head was sent ends the
// stream with an error (the runtime then reports the invocation as failed),
// not as a whole response; in the buffered modes the same panic still
// becomes a 500. A reader that closes the stream makes the handler's
// writes fail rather than block.
func TestStreamHandlerFailures(t *testing.T) {
	quietLogs(t)
	panicking := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, "partial")
		http.NewResponseController(w).Flush()
		panic("boom")
	})
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			if !k.streaming() {
				res := k.serve(t, context.Background(), panicking, k.upload, nil)
				wantRPCError(t, res, http.StatusInternalServerError, jsonrpc.InternalError)
				return
			}
			var ev events.LambdaFunctionURLRequest
			load(t, k.upload, &ev)
			res, err := FunctionURLStream(panicking)(context.Background(), &ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readStream(res)
			if !errors.Is(err, errHandlerFailed) {
				t.Errorf("reading the stream: %v, want errHandlerFailed", err)
			}
			if got.Status != http.StatusOK || got.Body != "partial" {
				t.Errorf("status %d, body %q; want 200 and what was flushed", got.Status, got.Body)
			}
		})
	}

	t.Run("reader gone", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), failsafe)
		defer cancel()
		writeErr := make(chan error, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			for ctx.Err() == nil {
				_, _ = io.WriteString(w, "data: tick\n\n")
				if err := rc.Flush(); err != nil {
					writeErr <- err
					return
				}
			}
			writeErr <- ctx.Err()
		})
		var ev events.LambdaFunctionURLRequest
		load(t, "function-url-round1.json", &ev)
		res, err := FunctionURLStream(h)(ctx, &ev)
		if err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(res)
		if _, err := readPrelude(br); err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "data: tick\n" {
			t.Fatalf("first line %q, %v", line, err)
		}
		_ = res.Close()
		if err := <-writeErr; !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("flush after the reader closed: %v, want io.ErrClosedPipe", err)
		}
	})
}
