package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcptest"
)

// stdio runs ServeStdio on pipes: the test writes lines to in and reads
// the server's lines from out.
type stdio struct {
	t    *testing.T
	in   *io.PipeWriter
	out  <-chan []byte
	done chan struct{} // closed when ServeStdio has returned err
	err  error
}

// wait waits for ServeStdio to return and returns its error.
func (st *stdio) wait() error {
	st.t.Helper()
	receive(st.t, (<-chan struct{})(st.done), "ServeStdio to return")
	return st.err
}

func startStdio(t *testing.T, ctx context.Context, s *Server) *stdio {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	st := &stdio{t: t, in: inW, done: make(chan struct{})}
	go func() {
		st.err = s.ServeStdio(ctx, inR, outW)
		outW.Close()
		close(st.done)
	}()
	out := make(chan []byte, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			out <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	st.out = out
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-st.done:
		case <-time.After(waitLimit):
			t.Error("ServeStdio did not return after end of input")
		}
	})
	return st
}

func (st *stdio) send(line []byte) {
	st.t.Helper()
	if _, err := st.in.Write(append(line, '\n')); err != nil {
		st.t.Fatalf("write: %v", err)
	}
}

// stdioLine is one request line: a JSON-RPC request with id (nil for a
// notification), method and params, whose _meta envelope declares the
// protocol version and no client capabilities, with meta's entries added.
// It is written out here because mcptest speaks Streamable HTTP, not
// stdio.
func stdioLine(tb testing.TB, id any, method string, params map[string]any, meta map[string]any) []byte {
	tb.Helper()
	env := map[string]any{metaProtocolVersion: testVersion, metaClientCaps: map[string]any{}}
	for k, v := range meta {
		env[k] = v
	}
	p := map[string]any{"_meta": env}
	for k, v := range params {
		p[k] = v
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": p}
	if id != nil {
		msg["id"] = id
	}
	b, err := json.Marshal(msg)
	if err != nil {
		tb.Fatalf("encode %s: %v", method, err)
	}
	return b
}

// request sends a request line (see stdioLine).
func (st *stdio) request(id any, method string, params map[string]any, meta map[string]any) {
	st.t.Helper()
	st.send(stdioLine(st.t, id, method, params, meta))
}

// toolLine is the line of a tools/call of name with arguments args
// (none when nil).
func toolLine(tb testing.TB, id any, name string, args any, meta map[string]any) []byte {
	tb.Helper()
	p := map[string]any{"name": name}
	if args != nil {
		p["arguments"] = args
	}
	return stdioLine(tb, id, "tools/call", p, meta)
}

// stdioMsg is a JSON-RPC message as the server wrote it.
type stdioMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *mcptest.Error  `json:"error"`
}

func parseMessage(tb testing.TB, b []byte) stdioMsg {
	tb.Helper()
	var m stdioMsg
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("line is not JSON: %v\n%s", err, b)
	}
	if m.JSONRPC != "2.0" {
		tb.Fatalf("line jsonrpc = %q, want 2.0: %s", m.JSONRPC, b)
	}
	return m
}

// next returns the next line the server wrote, parsed.
func (st *stdio) next() stdioMsg {
	st.t.Helper()
	select {
	case line, ok := <-st.out:
		if !ok {
			st.t.Fatal("the server's output ended")
		}
		if strings.Contains(string(line), "\n") {
			st.t.Fatalf("line contains a newline: %q", line)
		}
		return parseMessage(st.t, line)
	case <-time.After(waitLimit):
		st.t.Fatal("no line from the server")
	}
	return stdioMsg{}
}

// closeAndDrain ends the input, waits for ServeStdio and returns every
// remaining line.
func (st *stdio) closeAndDrain() ([]stdioMsg, error) {
	st.t.Helper()
	st.in.Close()
	var rest []stdioMsg
	for {
		select {
		case line, ok := <-st.out:
			if !ok {
				return rest, st.wait()
			}
			rest = append(rest, parseMessage(st.t, line))
		case <-time.After(waitLimit):
			st.t.Fatal("the server's output did not end")
		}
	}
}

func TestStdioRequests(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")
	st := startStdio(t, context.Background(), s)

	st.request(1, "server/discover", nil, nil)
	r := st.next()
	if string(r.ID) != "1" || r.Error != nil {
		t.Fatalf("discover: %+v", r)
	}
	res := decodeObject(t, r.Result)
	if res["resultType"] != "complete" || res["ttlMs"] == nil {
		t.Errorf("discover = %v", res)
	}
	checkServerInfo(t, res)

	// No headers on stdio: a tools/call needs only the body.
	st.send(toolLine(t, "x", "hello", nil, nil))
	r = st.next()
	if string(r.ID) != `"x"` || r.Error != nil {
		t.Fatalf("tools/call: %+v", r)
	}
	if text, _ := toolText(t, decodeObject(t, r.Result)); text != "hi" {
		t.Errorf("text %q", text)
	}

	for _, tt := range []struct {
		line string
		id   string
		code int
	}{
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "3", -32602},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}`, "4", -32022},
		{`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, "5", -32601},
		{`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, "6", -32022},
		{`{"jsonrpc":"2.0","id":7,"method":`, "null", -32700},
		{`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, "null", -32600},
	} {
		st.send([]byte(tt.line))
		r := st.next()
		if r.Error == nil || r.Error.Code != tt.code || string(r.ID) != tt.id {
			t.Errorf("%s: got %+v %+v, want code %d id %s", tt.line, r, r.Error, tt.code, tt.id)
		}
	}

	// Client responses, notifications and blank lines get no answer: the
	// next line out answers the next request.
	st.send([]byte(`{"jsonrpc":"2.0","id":99,"result":{}}`))
	st.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	st.send([]byte(`   `))
	st.request(10, "tools/list", nil, nil)
	if r := st.next(); string(r.ID) != "10" || r.Error != nil {
		t.Errorf("tools/list: %+v", r)
	}
	rest, err := st.closeAndDrain()
	if err != nil || len(rest) != 0 {
		t.Errorf("end: err %v, extra lines %+v", err, rest)
	}
}

func TestStdioInterleaving(t *testing.T) {
	s := newTestServer(t, nil)
	release := make(chan struct{})
	mustAddTool(t, s, Tool{Name: "slow"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if err := req.Progress(ctx, 1, 2, ""); err != nil {
			return nil, err
		}
		<-release
		if err := req.Log(ctx, slog.LevelInfo, "slow", "almost"); err != nil {
			return nil, err
		}
		return TextResult("slow done"), nil
	})
	st := startStdio(t, context.Background(), s)

	st.send(toolLine(t, 1, "slow", nil, map[string]any{"progressToken": "p", "io.modelcontextprotocol/logLevel": "info"}))
	if r := st.next(); r.Method != "notifications/progress" || !strings.Contains(string(r.Params), `"progressToken":"p"`) {
		t.Fatalf("first line = %+v", r)
	}
	// Request 1 is blocked; request 2 is answered meanwhile.
	st.request(2, "server/discover", nil, nil)
	if r := st.next(); string(r.ID) != "2" || r.Result == nil {
		t.Fatalf("discover while a call runs: %+v", r)
	}
	close(release)
	if r := st.next(); r.Method != "notifications/message" || !strings.Contains(string(r.Params), `"data":"almost"`) {
		t.Errorf("log line = %+v", r)
	}
	if r := st.next(); string(r.ID) != "1" || r.Result == nil {
		t.Errorf("response 1 = %+v", r)
	}
}

func TestStdioCancel(t *testing.T) {
	s := newTestServer(t, nil)
	started := make(chan struct{}, 1)
	cancelled := make(chan error, 1)
	mustAddTool(t, s, Tool{Name: "wait"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return TextResult("must not be sent"), nil
	})
	st := startStdio(t, context.Background(), s)

	st.send(toolLine(t, "w1", "wait", nil, nil))
	receive(t, started, "the handler to start")
	st.send([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w2"}}`)) // another id: no effect
	st.request(2, "server/discover", nil, nil)
	if r := st.next(); string(r.ID) != "2" {
		t.Fatalf("discover: %+v", r)
	}
	select {
	case err := <-cancelled:
		t.Fatalf("cancelling another id cancelled the call: %v", err)
	default:
	}
	st.send([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"w1","reason":"user"}}`))
	if err := receive(t, cancelled, "cancellation"); !errors.Is(err, context.Canceled) {
		t.Errorf("ctx.Err() = %v", err)
	}
	rest, err := st.closeAndDrain()
	if err != nil {
		t.Errorf("ServeStdio = %v", err)
	}
	for _, r := range rest {
		if r.Result != nil && strings.Contains(string(r.Result), "must not be sent") {
			t.Errorf("the cancelled call was answered: %+v", r)
		}
	}
}

func TestStdioDuplicateID(t *testing.T) {
	s := newTestServer(t, nil)
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	mustAddTool(t, s, Tool{Name: "wait"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		started <- struct{}{}
		<-release
		return TextResult("first"), nil
	})
	st := startStdio(t, context.Background(), s)
	st.send(toolLine(t, 1, "wait", nil, nil))
	receive(t, started, "the handler to start")
	st.request(1, "tools/list", nil, nil)
	r := st.next()
	if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "1" || !strings.Contains(r.Error.Message, "already in use") {
		t.Errorf("duplicate id: %+v %+v", r, r.Error)
	}
	close(release)
	if r := st.next(); string(r.ID) != "1" || r.Result == nil {
		t.Errorf("first call: %+v", r)
	}
}

func TestStdioEndOfInputWaits(t *testing.T) {
	s := newTestServer(t, nil)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	mustAddTool(t, s, Tool{Name: "wait"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		started <- struct{}{}
		<-release
		return TextResult("finished after EOF"), nil
	})
	st := startStdio(t, context.Background(), s)
	st.send(toolLine(t, 1, "wait", nil, nil))
	receive(t, started, "the handler to start")
	st.in.Close()
	select {
	case <-st.done:
		t.Fatalf("ServeStdio returned (%v) while a request was running", st.err)
	default:
	}
	close(release)
	// The output pipe is closed only after ServeStdio returns, so reading
	// the response proves ServeStdio waited for the call.
	r := st.next()
	if string(r.ID) != "1" || !strings.Contains(string(r.Result), "finished after EOF") {
		t.Errorf("response = %+v", r)
	}
	if err := st.wait(); err != nil {
		t.Errorf("ServeStdio = %v, want nil", err)
	}
}

func TestStdioLineTooLong(t *testing.T) {
	for _, limit := range []int64{256, 100 << 10} { // below and above the reader's 64 KiB buffer
		s := newTestServer(t, &Options{MaxRequestBytes: limit})
		textTool(s, t, "hello", "hi")
		st := startStdio(t, context.Background(), s)
		st.send(toolLine(t, 1, "hello", map[string]any{"pad": strings.Repeat("x", int(limit)*2)}, nil))
		r := st.next()
		if r.Error == nil || r.Error.Code != -32600 || string(r.ID) != "null" || !strings.Contains(r.Error.Message, "-byte limit") {
			t.Errorf("limit %d: got %+v %+v", limit, r, r.Error)
		}
		st.send(toolLine(t, 2, "hello", nil, nil))
		if r := st.next(); string(r.ID) != "2" || r.Result == nil {
			t.Errorf("limit %d: next request: %+v", limit, r)
		}
		// A line exactly at the limit is accepted.
		pad := int(limit) - len(toolLine(t, 3, "hello", map[string]any{"pad": ""}, nil))
		exact := toolLine(t, 3, "hello", map[string]any{"pad": strings.Repeat("y", pad)}, nil)
		if n := len(exact); n != int(limit) {
			t.Fatalf("line is %d bytes", n)
		}
		st.send(exact)
		if r := st.next(); string(r.ID) != "3" || r.Result == nil {
			t.Errorf("limit %d: line at the limit: %+v %+v", limit, r, r.Error)
		}
		// An over-long last line without a newline is refused too.
		if _, err := st.in.Write([]byte(strings.Repeat("z", int(limit)+10))); err != nil {
			t.Fatal(err)
		}
		rest, err := st.closeAndDrain()
		if err != nil || len(rest) != 1 || rest[0].Error == nil || rest[0].Error.Code != -32600 {
			t.Errorf("limit %d: unterminated long line: err %v lines %+v", limit, err, rest)
		}
	}
}

// The JSON limits of Options apply to stdio lines too.
func TestStdioJSONLimits(t *testing.T) {
	s := newTestServer(t, &Options{MaxJSONMembers: 4, MaxJSONNumberExponent: 5})
	textTool(s, t, "hello", "hi")
	st := startStdio(t, context.Background(), s)
	for _, tc := range []struct {
		args json.RawMessage
		msg  string
	}{
		{json.RawMessage(`{"a":1,"b":2,"c":3,"d":4,"e":5}`), "more than 4 members"},
		{json.RawMessage(`{"a":1e6}`), "beyond ±5"},
	} {
		st.send(toolLine(t, 1, "hello", tc.args, nil))
		if r := st.next(); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, tc.msg) {
			t.Errorf("%s: got %+v %+v, want -32602 naming %q", tc.args, r, r.Error, tc.msg)
		}
	}
	st.send(toolLine(t, 2, "hello", json.RawMessage(`{"a":1e5,"b":2}`), nil))
	if r := st.next(); string(r.ID) != "2" || r.Result == nil {
		t.Errorf("within the limits: %+v %+v", r, r.Error)
	}
}

func TestStdioListen(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	st := startStdio(t, context.Background(), s)
	st.request("L", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true, "promptsListChanged": true}}, nil)
	ack := st.next()
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"notifications":{"toolsListChanged":true}`) ||
		!strings.Contains(string(ack.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Fatalf("ack = %s %s", ack.Method, ack.Params)
	}
	// Requests are still served while the listen is open.
	st.request(2, "tools/list", nil, nil)
	if r := st.next(); string(r.ID) != "2" {
		t.Fatalf("tools/list: %+v", r)
	}
	textTool(s, t, "t2", "x")
	if r := st.next(); r.Method != "notifications/tools/list_changed" || !strings.Contains(string(r.Params), `"io.modelcontextprotocol/subscriptionId":"L"`) {
		t.Errorf("change = %s %s", r.Method, r.Params)
	}
	st.request(3, "subscriptions/listen", nil, nil)
	if r := st.next(); r.Error == nil || r.Error.Code != -32602 || string(r.ID) != "3" {
		t.Errorf("listen without a filter: %+v", r)
	}
	rest, err := st.closeAndDrain()
	if err != nil || len(rest) != 0 {
		t.Errorf("end: err %v, lines %+v", err, rest)
	}
	if n := s.hub.count(); n != 0 {
		t.Errorf("%d listeners after end of input", n)
	}
}

func TestStdioContextCancel(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "t1", "x")
	ctx, cancel := context.WithCancel(context.Background())
	st := startStdio(t, ctx, s)
	st.request(1, "tools/list", nil, nil)
	if r := st.next(); string(r.ID) != "1" {
		t.Fatalf("tools/list: %+v", r)
	}
	cancel()
	select {
	case <-st.done:
		if !errors.Is(st.err, context.Canceled) {
			t.Errorf("ServeStdio = %v, want context.Canceled", st.err)
		}
	case <-time.After(5 * time.Second):
		st.in.Close() // unblock the reader so the goroutine ends
		t.Fatal("ServeStdio did not return after ctx was cancelled while it waited for input")
	}
}
