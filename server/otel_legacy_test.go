package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// legacyPost posts a 2025-11-25 message and returns the response.
func legacyPost(t *testing.T, url, session string, msg any) *http.Response {
	t.Helper()
	body, err := json.Marshal(msg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// legacyInit opens a 2025-11-25 session that declares elicitation.
func legacyInit(t *testing.T, url string) string {
	t.Helper()
	resp := legacyPost(t, url, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "legacy-test", "version": "1"}}})
	session := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %s, session %q", resp.Status, session)
	}
	legacyPost(t, url, session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}).Body.Close()
	return session
}

// legacyCall calls tool on url in session, with the test's traceparent
// in _meta, and answers each elicitation/create by accepting {"ok": true}
// on answerURL, after calling onAsk. It returns the call's result.
func legacyCall(t *testing.T, url, answerURL, session, tool string, onAsk func()) json.RawMessage {
	t.Helper()
	call := legacyPost(t, url, session, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": map[string]any{}, "_meta": map[string]any{"traceparent": clientTrace}}})
	defer call.Body.Close()
	sc := bufio.NewScanner(call.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var m wireMsg
		if err := json.Unmarshal([]byte(data), &m); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		switch {
		case m.Method == "elicitation/create":
			if onAsk != nil {
				onAsk()
			}
			r := legacyPost(t, answerURL, session, map[string]any{"jsonrpc": "2.0", "id": m.ID,
				"result": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}})
			r.Body.Close()
		case string(m.ID) == "2":
			if m.Error != nil {
				t.Fatalf("tools/call: %s", m.Error)
			}
			return m.Result
		}
	}
	t.Fatalf("no result (%v)", sc.Err())
	return nil
}

// TestTraceLegacyBridgedCall runs a 2025-11-25 session's call whose
// handler asks its question as a real elicitation/create request: that
// request is a client span, child of the call's server span, which
// carries the session id.
func TestTraceLegacyBridgedCall(t *testing.T) {
	rec := newOtelRecorder(t)
	ts := serve(t, newInstance(t, rec.tel, nil))
	session := legacyInit(t, ts.URL)
	legacyCall(t, ts.URL, ts.URL, session, "confirm", nil)
	spans := waitSpans(t, rec, func(s tracetest.SpanStubs) bool { return find(s, "tools/call confirm") != nil })
	t.Logf("bridged 2025-11-25 call:\n%s", dump(spans))
	callSpan, ask := find(spans, "tools/call confirm"), find(spans, "elicitation/create")
	if ask == nil {
		t.Fatalf("no elicitation/create span:\n%s", dump(spans))
	}
	at := attrs(*callSpan)
	if at["mcp.session.id"] != session || at["mcp.protocol.version"] != "2025-11-25" || at["baton.outcome"] != "complete" {
		t.Errorf("call span attributes %v", at)
	}
	if callSpan.Parent.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("call span parent %v, want the _meta traceparent", callSpan.Parent)
	}
	if ask.SpanKind != trace.SpanKindClient || ask.Parent.SpanID() != callSpan.SpanContext.SpanID() || ask.SpanContext.TraceID() != callSpan.SpanContext.TraceID() {
		t.Errorf("elicitation/create: kind %v parent %s, want a client span child of %s", ask.SpanKind, ask.Parent.SpanID(), callSpan.SpanContext.SpanID())
	}
	if attrs(*ask)["mcp.method.name"] != "elicitation/create" {
		t.Errorf("elicitation/create attributes %v", attrs(*ask))
	}
}
