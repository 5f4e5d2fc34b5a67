package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// session is a bare 2025-11-25 client: it initializes, then posts and
// reads each answer (JSON, or the messages of an SSE stream).
type session struct {
	t         *testing.T
	url, user string
	id        string
}

func newSession(t *testing.T, r *rig, user string) *session {
	t.Helper()
	hs := httptest.NewServer(r.mcp)
	t.Cleanup(hs.Close)
	s := &session{t: t, url: hs.URL, user: user}
	resp := s.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{"elicitation": map[string]any{"url": map[string]any{}, "form": map[string]any{}}},
		"clientInfo":      map[string]any{"name": "legacy-test", "version": "1"},
	}})
	s.id = resp.Header.Get("Mcp-Session-Id")
	drain(resp)
	if s.id == "" {
		t.Fatalf("initialize: HTTP %d, no session", resp.StatusCode)
	}
	drain(s.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}))
	return s
}

func drain(resp *http.Response) {
	ch := make(chan map[string]json.RawMessage, 8)
	go read(resp, ch)
	for range ch {
	}
}

func (s *session) post(msg map[string]any) *http.Response {
	s.t.Helper()
	b, _ := json.Marshal(msg)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, s.url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Principal", s.user)
	if s.id != "" {
		req.Header.Set("Mcp-Session-Id", s.id)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp
}

func read(resp *http.Response, ch chan<- map[string]json.RawMessage) {
	defer close(ch)
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]json.RawMessage
		if json.NewDecoder(resp.Body).Decode(&m) == nil {
			ch <- m
		}
		return
	}
	sc := bufio.NewScanner(resp.Body)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimSpace(strings.TrimPrefix(line, "data:")))
		case line == "" && data.Len() > 0:
			var m map[string]json.RawMessage
			if json.Unmarshal([]byte(data.String()), &m) == nil {
				ch <- m
			}
			data.Reset()
		}
	}
}

// call posts tools/call connect and hands each server request to onAsk,
// posting its answer; it returns the notifications' methods and the
// final message.
func (s *session) call(id int, onAsk func(params json.RawMessage) any) ([]string, map[string]json.RawMessage) {
	s.t.Helper()
	ch := make(chan map[string]json.RawMessage, 16)
	go read(s.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": "connect", "arguments": map[string]any{"repo": "baton"}}}), ch)
	var notes []string
	for m := range ch {
		var method string
		_ = json.Unmarshal(m["method"], &method)
		switch {
		case method != "" && m["id"] != nil:
			drain(s.post(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": onAsk(m["params"])}))
		case method != "":
			notes = append(notes, method+" "+string(m["params"]))
		default:
			return notes, m
		}
	}
	s.t.Fatal("the stream ended without an answer")
	return nil, nil
}

type urlParams struct {
	Mode          string `json:"mode"`
	URL           string `json:"url"`
	ElicitationID string `json:"elicitationId"`
}

// TestLegacyParkedCall: the call waits after the user accepted; the
// callback completes it, and notifications/elicitation/complete precedes
// the result.
func TestURLFlowLegacyParkedCall(t *testing.T) {
	r := newRig(t, server.URLFallbackRefuse)
	s := newSession(t, r, "alice")
	var p urlParams
	notes, final := s.call(2, func(params json.RawMessage) any {
		if err := json.Unmarshal(params, &p); err != nil || p.Mode != "url" || p.ElicitationID == "" {
			t.Errorf("elicitation/create %s", params)
		}
		// The browser trip runs after the answer, while the call waits.
		go func() {
			time.Sleep(50 * time.Millisecond)
			st, _, loc := r.visit(p.URL, "alice")
			u, err := url.Parse(loc)
			if st != http.StatusSeeOther || err != nil {
				t.Errorf("start: %d %q", st, loc)
				return
			}
			q := url.Values{"state": {u.Query().Get("state")}, "code": {"good"}}
			if st, _, _ := r.visit(r.flow.CallbackURL()+"?"+q.Encode(), "alice"); st != http.StatusOK {
				t.Errorf("callback %d", st)
			}
		}()
		return map[string]any{"action": "accept"}
	})
	if len(notes) != 1 || !strings.Contains(notes[0], `notifications/elicitation/complete {"elicitationId":"`+p.ElicitationID+`"}`) {
		t.Fatalf("notifications %q", notes)
	}
	if !strings.Contains(string(final["result"]), "connected alice") {
		t.Fatalf("answer %s", final)
	}
}

// TestLegacyNeverComes: a parked call whose callback never comes ends,
// once the link expires, with an error result that says so.
func TestURLFlowLegacyNeverComes(t *testing.T) {
	r := newRigWith(t, func(c *server.URLFlowConfig) { c.TTL, c.Leeway, c.Now = time.Second, time.Second, time.Now })
	s := newSession(t, r, "alice")
	_, final := s.call(2, func(json.RawMessage) any { return map[string]any{"action": "accept"} })
	if !strings.Contains(string(final["result"]), "expired") || !strings.Contains(string(final["result"]), `"isError":true`) {
		t.Fatalf("answer %s", final)
	}
}

// TestLegacy32042: with LegacyRequiredError a 2025-11-25 call gets -32042
// listing the link (with its elicitationId); the same call after the
// browser trip completes. A 2026-07-28 client of the same server never
// sees -32042.
func TestURLFlowLegacy32042(t *testing.T) {
	r := newRigWith(t, func(c *server.URLFlowConfig) { c.LegacyRequiredError = true })
	s := newSession(t, r, "alice")
	_, final := s.call(2, func(json.RawMessage) any { t.Error("no question expected"); return nil })
	var e struct {
		Code int `json:"code"`
		Data struct {
			Elicitations []urlParams `json:"elicitations"`
		} `json:"data"`
	}
	if err := json.Unmarshal(final["error"], &e); err != nil || e.Code != -32042 || len(e.Data.Elicitations) != 1 || e.Data.Elicitations[0].Mode != "url" || e.Data.Elicitations[0].ElicitationID == "" {
		t.Fatalf("answer %s", final)
	}
	link := e.Data.Elicitations[0].URL
	if st, _ := r.authorize(t, link, "alice", "good", ""); st != 200 {
		t.Fatalf("callback %d", st)
	}
	_, final = s.call(3, func(json.RawMessage) any { t.Error("no question expected"); return nil })
	if !strings.Contains(string(final["result"]), "connected alice") {
		t.Fatalf("answer %s", final)
	}

	// 2026-07-28 on the same server: input_required, never -32042.
	var asked int
	c := r.client(t, "bob", func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
		asked++
		return mcptest.Decline()
	})
	res, err := c.CallTool(context.Background(), "connect", map[string]any{"repo": "baton"})
	if err != nil || asked != 1 || !res.IsError {
		t.Fatalf("modern client: %v %+v (asked %d)", err, res, asked)
	}
}
