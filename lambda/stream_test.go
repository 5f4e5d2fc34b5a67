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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
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

// streamBridge is lambdaBridge for the RESPONSE_STREAM mode, written for
// liveness: each request goes through FunctionURLStream (the recorded
// function URL event as the template) around the next instance, and what
// the adapter streams reaches the client as it comes. It keeps each stream
// as read to its end, and whether the instance's handler had returned by
// then.
type streamBridge struct {
	t        *testing.T
	instance func() (h http.Handler, returned *atomic.Bool)
	mu       sync.Mutex
	streams  []streamRecord
}

type streamRecord struct {
	head      result // status and headers
	body      string
	doneAtEnd bool
}

func (b *streamBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		b.t.Errorf("reading the request: %v", err)
		return
	}
	var ev events.LambdaFunctionURLRequest
	load(b.t, "function-url-round1.json", &ev)
	requestEdit(r, body)(&fields{Method: &ev.RequestContext.HTTP.Method, RawPath: &ev.RawPath, Query: &ev.RawQueryString, Domain: &ev.RequestContext.DomainName,
		Body: &ev.Body, Base64: &ev.IsBase64Encoded, Headers: ev.Headers, Cookies: &ev.Cookies})
	h, returned := b.instance()
	// The invocation outlives the client's interest in it (mcptest closes
	// the response once it has read it), bounded by failsafe.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), failsafe)
	defer cancel()
	res, err := functionURLStream(h)(ctx, &ev)
	if err != nil {
		b.t.Errorf("FunctionURLStream: %v", err)
		return
	}
	defer res.Close()
	br := bufio.NewReader(res)
	head, err := readPrelude(br)
	if err != nil {
		b.t.Errorf("prelude: %v", err)
		return
	}
	for name, v := range head.Headers {
		w.Header().Set(name, v)
	}
	w.WriteHeader(head.Status)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	var all strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := br.Read(buf)
		all.Write(buf[:n])
		if n > 0 {
			_, _ = w.Write(buf[:n]) // fails once the client has closed; read on
			_ = rc.Flush()
		}
		if err != nil {
			if err != io.EOF {
				b.t.Errorf("reading the stream: %v", err)
			}
			break
		}
	}
	b.mu.Lock()
	b.streams = append(b.streams, streamRecord{head: head, body: all.String(), doneAtEnd: returned.Load()})
	b.mu.Unlock()
}

// ended checks every stream the bridge served: it opened as 200
// text/event-stream, its last message is the response (nothing followed
// it), and it ended only after the handler had returned.
func (b *streamBridge) ended(t *testing.T) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.streams) == 0 {
		t.Fatal("no stream was served")
	}
	for i, st := range b.streams {
		if st.head.Status != http.StatusOK || st.head.Headers["Content-Type"] != "text/event-stream" {
			t.Errorf("stream %d: prelude status %d, headers %q; want 200 text/event-stream", i+1, st.head.Status, st.head.Headers)
		}
		var last string
		for line := range strings.SplitSeq(st.body, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				last = strings.TrimSpace(d)
			}
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(last), &msg); err != nil || msg.ID == nil || msg.Result == nil {
			t.Errorf("stream %d does not end with the response: %q", i+1, last)
		}
		if !st.doneAtEnd {
			t.Errorf("stream %d ended before the handler returned", i+1)
		}
	}
}

// streamClient returns an mcptest client of b declaring elicitation, with
// opts' callbacks.
func streamClient(t *testing.T, b *streamBridge, opts mcptest.Options) *mcptest.Client {
	t.Helper()
	opts.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}
	c, err := mcptest.New(mcptest.Handler(b), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
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
			if err := req.Log(ctx, slog.LevelInfo, "count", fmt.Sprintf("step %d", i)); err != nil {
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
	b := &streamBridge{t: t, instance: func() (http.Handler, *atomic.Bool) { return finished(srv, &done), &done }}
	// Each step's log notification reaches the client while the tool is
	// blocked; only then does the client release it.
	step := 0
	c := streamClient(t, b, mcptest.Options{OnNotification: func(n mcptest.Notification) {
		if n.Method != "notifications/message" {
			return
		}
		step++
		if done.Load() {
			t.Errorf("step %d: the handler returned before its notifications were read", step)
		}
		release.open(ctx, t) // the tool was blocked until now
	}})
	r, err := c.Do(ctx, "tools/call", map[string]any{"name": "count"}, mcptest.WithProgressToken("p1"), mcptest.WithLogLevel("info"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notifications) != 6 {
		t.Fatalf("%d notifications, want 6: %+v", len(r.Notifications), r.Notifications)
	}
	for i := 1; i <= 3; i++ {
		p, m := r.Notifications[2*i-2], r.Notifications[2*i-1]
		if p.Method != "notifications/progress" || !strings.Contains(string(p.Params), fmt.Sprintf(`"progress":%d`, i)) {
			t.Errorf("event %s %s, want progress %d", p.Method, p.Params, i)
		}
		if m.Method != "notifications/message" || !strings.Contains(string(m.Params), fmt.Sprintf(`"step %d"`, i)) {
			t.Errorf("event %s %s, want the log of step %d", m.Method, m.Params, i)
		}
	}
	if !strings.Contains(string(r.Result), `"counted"`) {
		t.Fatalf("final event: %s", r.Body)
	}
	b.ended(t)
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

	// Round 1 on instance A blocks after its progress until the client has
	// read it; round 2 runs on instance B.
	release := make(gate)
	var doneA, doneB atomic.Bool
	instances := []func() (http.Handler, *atomic.Bool){
		func() (http.Handler, *atomic.Bool) { return finished(newSurveyInstance(t, release), &doneA), &doneA },
		func() (http.Handler, *atomic.Bool) { return finished(newSurveyInstance(t, nil), &doneB), &doneB },
	}
	var served atomic.Int32
	b := &streamBridge{t: t, instance: func() (http.Handler, *atomic.Bool) { return instances[served.Add(1)-1]() }}
	opened := false
	c := streamClient(t, b, mcptest.Options{
		OnNotification: func(n mcptest.Notification) {
			if opened {
				return
			}
			opened = true
			if doneA.Load() {
				t.Error("round 1: the handler returned before its notification was read")
			}
			release.open(ctx, t)
		},
		Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"name": "Ada"})
		},
	})
	res, err := c.CallTool(ctx, "survey", nil, mcptest.WithProgressToken("p1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text() != "Hello, Ada!" || res.IsError {
		t.Fatalf("round 2: %q (isError %v)", res.Text(), res.IsError)
	}
	ex := res.Exchange
	if len(ex.Rounds) != 2 || strings.Count(ex.Rounds[0].RequestState, ".") != 3 {
		t.Fatalf("rounds %+v, want input_required with a JWT state, then the result", ex.Rounds)
	}
	for i, want := range [][]string{{`"asking"`}, {`"asking"`, `"answered"`}} {
		notes := ex.Rounds[i].Notifications
		if len(notes) != len(want) {
			t.Fatalf("round %d: notifications %+v, want %v", i+1, notes, want)
		}
		for j, w := range want {
			if notes[j].Method != "notifications/progress" || !strings.Contains(string(notes[j].Params), w) {
				t.Errorf("round %d: event %s %s, want progress %s", i+1, notes[j].Method, notes[j].Params, w)
			}
		}
	}
	b.ended(t)
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
				wantRPCError(t, res, http.StatusInternalServerError, mcp.InternalError)
				return
			}
			var ev events.LambdaFunctionURLRequest
			load(t, k.upload, &ev)
			res, err := functionURLStream(panicking)(context.Background(), &ev)
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
		res, err := functionURLStream(h)(ctx, &ev)
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
