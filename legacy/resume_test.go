package legacy_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// sseEvent is one event of a raw SSE response.
type sseEvent struct {
	id  string
	msg message
}

// rawSSE reads the events of one response, ids included.
type rawSSE struct {
	resp *http.Response
	ch   chan sseEvent
}

func readSSE(resp *http.Response) *rawSSE {
	r := &rawSSE{resp: resp, ch: make(chan sseEvent, 64)}
	go func() {
		defer close(r.ch)
		br := bufio.NewReader(resp.Body)
		var id string
		var data []byte
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "" && data != nil:
				var m message
				_ = json.Unmarshal(data, &m)
				m.Raw = data
				r.ch <- sseEvent{id: id, msg: m}
				id, data = "", nil
			case strings.HasPrefix(line, "id:"):
				id = strings.TrimSpace(line[3:])
			case strings.HasPrefix(line, "data:"):
				data = append(data, strings.TrimPrefix(line[5:], " ")...)
			}
		}
	}()
	return r
}

func (r *rawSSE) next(tb testing.TB) sseEvent {
	tb.Helper()
	select {
	case e, ok := <-r.ch:
		if !ok {
			tb.Fatal("the stream ended")
		}
		return e
	case <-time.After(10 * time.Second):
		tb.Fatal("no event within 10 s")
	}
	return sseEvent{}
}

// rawRequest sends one HTTP request of session c to url.
func (c *wireClient) rawRequest(method, url string, body []byte, hdr map[string]string) *http.Response {
	c.tb.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	r, err := http.NewRequest(method, url, rd)
	if err != nil {
		c.tb.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set(rpcwire.HeaderSessionID, c.sid)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		c.tb.Fatal(err)
	}
	c.tb.Cleanup(func() { resp.Body.Close() })
	return resp
}

// resumableStores runs test with two instances sharing a session store
// and an event store: memory (one process), Redis, and a three-master
// Redis Cluster.
func resumableStores(t *testing.T, test func(t *testing.T, ti *twoInstances)) {
	register := func(t *testing.T) func(srv *server.Server) {
		return func(srv *server.Server) {
			addTool(t, srv, "log_then_ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
				if err := req.Log(ctx, slog.LevelInfo, "test", "about to ask"); err != nil {
					return nil, err
				}
				r, err := req.CreateFormElicitation(ctx, "Name?", nameSchema(t))
				if err != nil {
					return nil, err
				}
				var v struct {
					Name string `json:"name"`
				}
				_ = r.Decode(&v)
				return server.TextResult("hello " + v.Name), nil
			})
		}
	}
	t.Run("memory", func(t *testing.T) {
		ti := newTwoInstances(t, legacy.NewMemoryStore(nil), legacy.Options{Events: legacy.NewMemoryEventStore(0)}, register(t))
		test(t, ti)
	})
	t.Run("redis", func(t *testing.T) {
		rs := testredis.Start(t)
		ti := newTwoInstances(t, redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:"}).Sessions(), legacy.Options{}, register(t))
		test(t, ti)
	})
	t.Run("redis cluster", func(t *testing.T) {
		rc := testredis.StartCluster(t)
		ti := newTwoInstances(t, redisfleet.New(rc.ClusterClient(t), redisfleet.Options{Prefix: "test:"}).Sessions(), legacy.Options{}, register(t))
		test(t, ti)
	})
}

// A client whose call's stream is cut resumes it on the other instance
// with Last-Event-ID: it gets the elicitation it missed, its answer
// reaches the call, and the call's response ends the resumed stream.
// Another session cannot read the stream with the same id.
func TestResumeCallStream(t *testing.T) {
	resumableStores(t, func(t *testing.T, ti *twoInstances) {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		call := readSSE(c.rawRequest(http.MethodPost, instanceURL(ti.a), mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": "c1", "method": "tools/call", "params": toolCall("log_then_ask", nil)}), nil))
		first := call.next(t)
		if first.msg.Method != "notifications/message" || first.id == "" {
			t.Fatalf("first event %q %s, want the log line with an id", first.id, first.msg.Raw)
		}
		call.resp.Body.Close() // cut, before the elicitation is read

		// Another session, same id: no replay, its own GET stream.
		other := connect(t, ti.a, `{"elicitation":{}}`)
		stolen := readSSE(other.rawRequest(http.MethodGet, instanceURL(ti.b), nil, map[string]string{"Last-Event-ID": first.id, "Accept": "text/event-stream"}))
		addTool(t, ti.srvB, "marker", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) { return nil, nil })
		if e := stolen.next(t); e.msg.Method != "notifications/tools/list_changed" {
			t.Errorf("another session's GET with the id got %s, want only its own notifications", e.msg.Raw)
		}

		resumed := readSSE(c.rawRequest(http.MethodGet, instanceURL(ti.b), nil, map[string]string{"Last-Event-ID": first.id, "Accept": "text/event-stream"}))
		if resumed.resp.StatusCode != http.StatusOK {
			t.Fatalf("resume: HTTP %d", resumed.resp.StatusCode)
		}
		ask := resumed.next(t)
		if ask.msg.Method != "elicitation/create" || ask.id == "" || ask.id == first.id {
			t.Fatalf("resumed with %q %s, want the elicitation with a new id", ask.id, ask.msg.Raw)
		}
		c.on(ti.b).answer(ask.msg, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
		res := resumed.next(t)
		if text, _ := toolText(t, res.msg.Result); text != "hello Ada" {
			t.Errorf("resumed stream's response %s, want hello Ada", res.msg.Raw)
		}
		if _, open := <-resumed.ch; open {
			t.Error("the resumed stream went on after the response")
		}
		// Resuming again from the elicitation gives only the response.
		again := readSSE(c.rawRequest(http.MethodGet, instanceURL(ti.a), nil, map[string]string{"Last-Event-ID": ask.id, "Accept": "text/event-stream"}))
		if e := again.next(t); e.id != res.id || !bytes.Equal(e.msg.Raw, res.msg.Raw) {
			t.Errorf("second resume: %q %s, want %q %s", e.id, e.msg.Raw, res.id, res.msg.Raw)
		}
		t.Logf("resumed on the other instance: %s → %s → %s", first.id, ask.id, res.id)
	})
}

// A resumed stream whose call ends because its instance closed gets an
// error response saying so.
func TestResumeAfterHolderClosed(t *testing.T) {
	resumableStores(t, func(t *testing.T, ti *twoInstances) {
		c := connect(t, ti.a, `{"elicitation":{}}`)
		call := readSSE(c.rawRequest(http.MethodPost, instanceURL(ti.a), mustJSON(t, map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": toolCall("log_then_ask", nil)}), nil))
		first := call.next(t)
		call.resp.Body.Close()
		resumed := readSSE(c.rawRequest(http.MethodGet, instanceURL(ti.b), nil, map[string]string{"Last-Event-ID": first.id, "Accept": "text/event-stream"}))
		if e := resumed.next(t); e.msg.Method != "elicitation/create" {
			t.Fatalf("resumed with %s", e.msg.Raw)
		}
		ti.a.h.Close()
		e := resumed.next(t)
		for e.msg.Method == "notifications/cancelled" { // the elicitation withdrawn
			e = resumed.next(t)
		}
		if e.msg.Error == nil || string(e.msg.ID) != "9" || !strings.Contains(e.msg.Error.Message, "closed") {
			t.Errorf("after the holder closed: %s, want an error response for request 9 saying the server closed", e.msg.Raw)
		}
	})
}
