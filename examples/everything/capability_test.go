package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// TestStreamingElicitationWithoutElicitation calls test_streaming_elicitation,
// which reports progress before it asks, without declaring elicitation:
// the missing capability is known before the stream opens (the tool
// declares it), so the answer is HTTP 400 with a JSON -32021 body, not a
// 200 event stream carrying the progress and then the error.
func TestStreamingElicitationWithoutElicitation(t *testing.T) {
	ts := newTestServer(t, testKey)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": "test_streaming_elicitation",
		"_meta": map[string]any{
			"progressToken": "p1",
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		},
	}})
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "test_streaming_elicitation")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %s, want 400 application/json; body %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	var out struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Error == nil {
		t.Fatalf("body %s (%v), want a JSON-RPC error", raw, err)
	}
	if string(out.ID) != "7" || out.Error.Code != -32021 || string(out.Error.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Errorf("body %s, want id 7, -32021 and requiredCapabilities.elicitation", raw)
	}
}
