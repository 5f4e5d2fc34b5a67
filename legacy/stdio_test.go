package legacy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
)

// stdioPeer drives srv.ServeStdio through pipes: it writes the client's
// lines and reads the server's. It is not mcptest, which speaks HTTP: over
// stdio the newline-delimited JSON lines themselves are what is tested.
type stdioPeer struct {
	tb   testing.TB
	in   *io.PipeWriter
	out  chan message
	done chan error
	log  *wireLog
}

// startStdio serves srv on stdio through pipes. It settles the server
// first, so that the session gets only the changes made after.
func startStdio(tb testing.TB, srv *server.Server) *stdioPeer {
	tb.Helper()
	settle(tb, srv)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &stdioPeer{tb: tb, in: inW, out: make(chan message, 64), done: make(chan error, 1), log: &wireLog{}}
	go func() {
		err := srv.ServeStdio(context.Background(), inR, outW)
		_ = outW.Close()
		p.done <- err
	}()
	go func() {
		defer close(p.out)
		sc := bufio.NewScanner(io.TeeReader(outR, p.log))
		sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
		for sc.Scan() {
			var m message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m.Method = "<bad line " + sc.Text() + ">"
			}
			m.Raw = append([]byte(nil), sc.Bytes()...)
			p.out <- m
		}
	}()
	tb.Cleanup(func() {
		_ = inW.Close()
		select {
		case <-p.done:
		case <-time.After(waitLimit):
			tb.Error("ServeStdio did not return after end of input")
		}
		_ = outR.Close()
	})
	return p
}

func (p *stdioPeer) send(v any) {
	p.tb.Helper()
	b := append(mustJSON(p.tb, v), '\n')
	if _, err := p.in.Write(b); err != nil {
		p.tb.Fatalf("write stdin: %v", err)
	}
}

func (p *stdioPeer) request(id any, method string, params any) {
	p.tb.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	p.send(msg)
}

func (p *stdioPeer) next() message {
	p.tb.Helper()
	select {
	case m, ok := <-p.out:
		if !ok {
			p.tb.Fatal("stdout ended; want another message")
		}
		if strings.HasPrefix(m.Method, "<bad") {
			p.tb.Fatalf("malformed output: %s", m.Method)
		}
		return m
	case <-time.After(waitLimit):
		p.tb.Fatal("no output within the wait limit")
	}
	return message{}
}

func (p *stdioPeer) response(id string) message {
	p.tb.Helper()
	m := p.next()
	if !m.IsResponse() || string(m.ID) != id {
		p.tb.Fatalf("want the response to %s, got %s", id, m.Raw)
	}
	return m
}

func (p *stdioPeer) initialize(caps string) map[string]any {
	p.tb.Helper()
	p.request(0, "initialize", initParams(legacyVersion, caps))
	m := p.response("0")
	if m.Error != nil {
		p.tb.Fatalf("initialize: %s", m.Raw)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	return decodeMap(p.tb, m.Result)
}

func TestStdioSwitchesToLegacy(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "echo", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("echo " + req.Meta.ProtocolVersion), nil
	})
	p := startStdio(t, srv)

	// Before initialize the process is modern: a request without _meta is
	// malformed, and server/discover answers.
	p.request(1, "tools/list", map[string]any{})
	if m := p.response("1"); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("tools/list without _meta before initialize = %s, want -32602", m.Raw)
	}
	p.request(2, "server/discover", map[string]any{"_meta": map[string]any{metaVersion: modernVersion, metaCaps: map[string]any{}}})
	if m := p.response("2"); m.Error != nil || !strings.Contains(string(m.Result), `"supportedVersions"`) {
		t.Errorf("server/discover = %s", m.Raw)
	}

	res := p.initialize(`{}`)
	if res["protocolVersion"] != legacyVersion {
		t.Errorf("protocolVersion = %v", res["protocolVersion"])
	}
	legacyShape(t, "initialize", mustJSON(t, res))

	// Now the legacy methods work without _meta.
	p.request(3, "ping", nil)
	if m := p.response("3"); string(m.Result) != "{}" {
		t.Errorf("ping = %s", m.Raw)
	}
	p.request(4, "tools/list", nil)
	legacyShape(t, "tools/list", p.response("4").Result)
	p.request(5, "tools/call", toolCall("echo", nil))
	if text, _ := toolText(t, p.response("5").Result); text != "echo "+legacyVersion {
		t.Errorf("legacy text = %q", text)
	}
	p.request(6, "initialize", initParams(legacyVersion, `{}`))
	if m := p.response("6"); m.Error == nil || m.Error.Code != -32600 {
		t.Errorf("second initialize = %s, want -32600", m.Raw)
	}
	// A modern request still takes the modern path.
	p.request(7, "tools/call", map[string]any{"name": "echo", "_meta": map[string]any{metaVersion: modernVersion, metaCaps: map[string]any{}}})
	m := p.response("7")
	if text, _ := toolText(t, m.Result); text != "echo "+modernVersion || !strings.Contains(string(m.Result), `"resultType":"complete"`) {
		t.Errorf("modern call in a legacy process = %s", m.Raw)
	}
}

func TestStdioNotInitialized(t *testing.T) {
	srv := newServer(t)
	p := startStdio(t, srv)
	// A legacy ping before initialize is a modern request without _meta.
	p.request("p", "ping", nil)
	if m := p.response(`"p"`); m.Error == nil {
		t.Errorf("ping before initialize = %s, want an error", m.Raw)
	}
	p.request("i", "initialize", map[string]any{"protocolVersion": legacyVersion})
	if m := p.response(`"i"`); m.Error == nil || m.Error.Code != -32602 {
		t.Errorf("initialize without capabilities = %s, want -32602", m.Raw)
	}
	p.initialize(`{}`)
}

func TestStdioBlockingElicitation(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	askTools(t, srv, nil)
	suspendTools(t, srv)
	p := startStdio(t, srv)
	p.initialize(allCaps)

	p.request("c1", "tools/call", toolCall("ask_name", nil))
	req := p.next()
	if !req.IsRequest() || req.Method != "elicitation/create" || params(t, req)["message"] != "What is your name?" {
		t.Fatalf("want elicitation/create, got %s", req.Raw)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}})
	if o := recv(t, out, "the handler"); o.err != nil {
		t.Fatalf("handler error: %v", o.err)
	}
	m := p.response(`"c1"`)
	if text, _ := toolText(t, m.Result); text != `action=accept content={"name":"Ada"}` {
		t.Errorf("result = %s", m.Raw)
	}

	// Questions in sequence: the second goes out once the first is
	// answered.
	p.request("c2", "tools/call", toolCall("ask_two", nil))
	first := p.next()
	if first.Method != "elicitation/create" || params(t, first)["message"] != "Your name?" {
		t.Fatalf("first = %s", first.Raw)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": first.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Linus"}}})
	second := p.next()
	if second.Method != "elicitation/create" || params(t, second)["message"] != "Your age?" {
		t.Fatalf("second = %s", second.Raw)
	}
	p.send(map[string]any{"jsonrpc": "2.0", "id": second.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"age": 55}}})
	if text, _ := toolText(t, p.response(`"c2"`).Result); text != "Linus is 55" {
		t.Errorf("sequential result = %q", text)
	}

	// The bridge works the same way on stdio: the re-run resumes the
	// state, and nothing but the response goes out.
	p.request("c3", "tools/call", toolCall("suspend_once", nil))
	if text, _ := toolText(t, p.response(`"c3"`).Result); text != `n=42 round=2 principal=""` {
		t.Errorf("bridged result = %q", text)
	}

	// The stateless protocol's machinery never reaches stdout.
	for _, needle := range []string{"requestState", "eyJ", "inputResponses", "input_required"} {
		if strings.Contains(p.log.String(), needle) {
			t.Errorf("%s reached stdout", needle)
		}
	}
}

func TestStdioCancel(t *testing.T) {
	srv := newLegacyServer(t, &legacy.Options{CallTimeout: 5 * time.Second}, nil)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	p := startStdio(t, srv)
	p.initialize(allCaps)

	p.request("c", "tools/call", toolCall("ask_name", nil))
	req := p.next()
	p.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": "c", "reason": "stop"}})
	o := recv(t, out, "the handler")
	if o.err == nil || !strings.Contains(o.err.Error(), "stop") || o.ctxErr != context.Canceled {
		t.Errorf("handler: err %v, ctx %v", o.err, o.ctxErr)
	}
	m := p.next()
	if m.Method != "notifications/cancelled" || string(mustJSON(t, params(t, m)["requestId"])) != string(req.ID) {
		t.Errorf("want notifications/cancelled for %s, got %s", req.ID, m.Raw)
	}
	// The next line is the answer to a later request: nothing for "c".
	p.request("after", "ping", nil)
	if m := p.next(); string(m.ID) != `"after"` {
		t.Errorf("after the cancel: %s", m.Raw)
	}
}

func TestStdioEndOfInput(t *testing.T) {
	srv := newServer(t)
	out := make(chan outcome, 1)
	blockingTools(t, srv, out)
	settle(t, srv) // stdout must carry only what the test reads
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), inR, outW) }()
	lines := bufio.NewScanner(outR)
	write := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		if !lines.Scan() {
			t.Fatal("stdout ended")
		}
		return lines.Text()
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if l := read(); !strings.Contains(l, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", l)
	}
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ask_name"}}`)
	if l := read(); !strings.Contains(l, `"method":"elicitation/create"`) {
		t.Fatalf("want elicitation/create, got %s", l)
	}
	// Drain stdout from here on so no write can block.
	rest := make(chan []string, 1)
	go func() {
		var ls []string
		for lines.Scan() {
			ls = append(ls, lines.Text())
		}
		rest <- ls
	}()
	closed := time.Now()
	_ = inW.Close()
	o := recv(t, out, "the handler")
	if !errors.Is(o.err, legacy.ErrEndOfInput) {
		t.Errorf("handler error = %v, want one wrapping legacy.ErrEndOfInput", o.err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio = %v, want nil", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("ServeStdio did not return after end of input")
	}
	if d := time.Since(closed); d > time.Second {
		t.Errorf("end of input took %v to end the wait", d)
	}
	_ = outW.Close()
	for _, l := range recv(t, rest, "the rest of stdout") {
		if strings.Contains(l, `"id":2`) && strings.Contains(l, `"result"`) && !strings.Contains(l, `"isError":true`) {
			t.Errorf("a successful result after end of input: %s", l)
		}
	}
}
