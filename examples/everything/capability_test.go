package main

import (
	"net/http"
	"testing"

	"github.com/baton-mcp/baton/mcptest"
)

// TestStreamingElicitationWithoutElicitation calls test_streaming_elicitation,
// which reports progress before it asks, without declaring elicitation:
// the missing capability is known before the stream opens (the tool
// declares it), so the answer is HTTP 400 with a JSON -32021 body, not a
// 200 event stream carrying the progress and then the error.
func TestStreamingElicitationWithoutElicitation(t *testing.T) {
	ts := newTestServer(t, testKey)
	c, err := mcptest.New(mcptest.URL(ts.URL+"/mcp", nil), nil) // declares no capabilities
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(t.Context(), "tools/call", map[string]any{"name": "test_streaming_elicitation"},
		mcptest.WithID(7), mcptest.WithProgressToken("p1"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusBadRequest || resp.Streamed || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("HTTP %d %s (streamed %v), want 400 application/json; body %s", resp.Status, resp.Header.Get("Content-Type"), resp.Streamed, resp.Body)
	}
	if resp.Error == nil || string(resp.ID) != "7" || resp.Error.Code != -32021 || string(resp.Error.Data) != `{"requiredCapabilities":{"elicitation":{}}}` {
		t.Errorf("body %s, want id 7, -32021 and requiredCapabilities.elicitation", resp.Body)
	}
}
