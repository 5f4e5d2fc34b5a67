package legacy_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/server"
)

// A call parked on its client's answer runs on its HTTP request's own
// goroutine (no goroutine of its own), and the drain still ends its
// stream from outside: each parked call's response ends cleanly (the
// chunked body complete, the retry field last) while the calls go on, and
// each client resumes on the other instance, answers there, and gets its
// result on the resumed stream.
func TestDrainEndsInlineCalls(t *testing.T) {
	ti := newTwoInstances(t, legacy.NewMemoryStore(nil), legacy.Options{Events: legacy.NewMemoryEventStore(0)}, helloNameTool(t))
	const n = 4
	type parked struct {
		c    *wireClient
		ask  message
		id   string // the elicitation's event id
		rest chan []byte
		err  chan error
	}
	calls := make([]*parked, n)
	for i := range calls {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		resp := c.rawRequest(http.MethodPost, instanceURL(ti.a), mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": toolCall("ask_name", nil)}), nil)
		br := bufio.NewReader(resp.Body)
		p := &parked{c: c, rest: make(chan []byte, 1), err: make(chan error, 1)}
		for p.id == "" || p.ask.Method == "" {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("call %d: the stream ended before the elicitation: %v", i, err)
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "id: "):
				p.id = line[4:]
			case strings.HasPrefix(line, "data: "):
				p.ask = parseMessage(t, []byte(line[6:]))
			}
		}
		if p.ask.Method != "elicitation/create" {
			t.Fatalf("call %d: first event %s, want the elicitation", i, p.ask.Raw)
		}
		go func() {
			b, err := io.ReadAll(br)
			p.rest <- b
			p.err <- err
		}()
		calls[i] = p
	}

	// Every call in progress runs on its request's goroutine.
	buf := make([]byte, 1<<20)
	for len(buf) < 64<<20 {
		if m := runtime.Stack(buf, true); m < len(buf) {
			buf = buf[:m]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	running := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		// An HTTP call (serveCall, or serveCallAside on its own
		// goroutine); stdio sessions serve theirs elsewhere.
		if !bytes.Contains(g, []byte("legacy.(*session).serveRequest")) || !bytes.Contains(g, []byte("legacy.(*adapter).serveCall")) {
			continue
		}
		running++
		if !bytes.Contains(g, []byte("net/http.(*conn).serve")) {
			t.Errorf("a parked call runs on a goroutine of its own, not its request's:\n%s", g)
		}
	}
	if running != n {
		t.Errorf("%d goroutines serve a request, want the %d parked calls", running, n)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- ti.srvA.Shutdown(ctx) }()
	for i, p := range calls {
		rest, err := recv(t, p.rest, "the end of a parked call's stream"), recv(t, p.err, "the end of a parked call's stream")
		if err != nil {
			t.Errorf("call %d: its stream ended with %v after %q, want a complete response", i, err, rest)
		}
		if !bytes.HasSuffix(rest, []byte("retry: 500\n\n")) || bytes.Contains(rest, []byte("data:")) {
			t.Errorf("call %d: the stream's end %q, want the retry field and no event", i, rest)
		}
	}
	select {
	case err := <-drained:
		t.Fatalf("Shutdown returned (%v) while the calls were parked", err)
	default:
	}
	for i, p := range calls {
		resumed := readSSE(p.c.rawRequest(http.MethodGet, instanceURL(ti.b), nil, map[string]string{"Last-Event-ID": p.id, "Accept": "text/event-stream"}))
		if resumed.resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d: resume on the other instance: HTTP %d", i, resumed.resp.StatusCode)
		}
		name := string(rune('A' + i))
		p.c.on(ti.b).answer(p.ask, map[string]any{"action": "accept", "content": map[string]any{"name": name}})
		res := resumed.next(t)
		if text, _ := toolText(t, res.msg.Result); text != "hello "+name || string(res.msg.ID) != "7" {
			t.Errorf("call %d: the resumed stream's response %s, want hello %s for request 7", i, res.msg.Raw, name)
		}
	}
	if err := recv(t, drained, "the end of the drain"); err != nil {
		t.Errorf("Shutdown after the calls finished: %v", err)
	}
}

// An HTTP/1.0 request's stream has no chunked framing: the drain ends it
// with the retry field and the end of its connection, and nothing else.
func TestDrainEndsHTTP10Call(t *testing.T) {
	ti := newTwoInstances(t, legacy.NewMemoryStore(nil), legacy.Options{Events: legacy.NewMemoryEventStore(0)}, func(srv *server.Server) {
		addTool(t, srv, "ask_name", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
			if err != nil {
				return nil, err
			}
			return server.TextResult(string(r.Action)), nil
		})
	})
	c := connect(t, ti.a, `{"elicitation":{}}`)
	conn, err := net.Dial("tcp", ti.a.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": toolCall("ask_name", nil)})
	fmt.Fprintf(conn, "POST /mcp HTTP/1.0\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s: %s\r\nContent-Length: %d\r\n\r\n%s",
		ti.a.ts.Listener.Addr(), rpcwire.HeaderSessionID, c.sid, len(body), body)
	br := bufio.NewReader(conn)
	var head strings.Builder
	for !strings.Contains(head.String(), "elicitation/create") {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before the elicitation (%v): %q", err, head.String())
		}
		head.WriteString(line)
	}
	if strings.Contains(head.String(), "Transfer-Encoding: chunked") {
		t.Fatalf("an HTTP/1.0 response is chunked: %q", head.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	drained := make(chan error, 1)
	go func() { drained <- ti.srvA.Shutdown(ctx) }()
	_ = conn.SetReadDeadline(time.Now().Add(waitLimit))
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "\nretry: 500\n\n" {
		t.Errorf("the stream's end %q (%v), want the retry field, then the end of the connection", rest, err)
	}
	// The call goes on: answered on the other instance, it ends, and so
	// does the drain.
	ask := parseMessage(t, []byte(strings.TrimSpace(head.String()[strings.LastIndex(head.String(), "data: ")+6:])))
	c.on(ti.b).answer(ask, map[string]any{"action": "decline"})
	if err := recv(t, drained, "the end of the drain"); err != nil {
		t.Errorf("Shutdown after the call finished: %v", err)
	}
}
