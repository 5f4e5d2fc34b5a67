package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// testVersion is the protocol version every test request declares.
const testVersion = mcp.ProtocolVersion

// waitLimit bounds every wait for something the test expects to happen. It
// is a guard against hangs, never a pause: waits end as soon as the event
// arrives.
const waitLimit = 10 * time.Second

// testKey is the fixed requestState key of every test server.
var testKey = mrtr.Key{ID: "k1", Secret: []byte("baton-test-secret-0123456789abcdef")}

func testRing(tb testing.TB) *mrtr.KeyRing {
	tb.Helper()
	ring, err := mrtr.NewKeyRing(testKey)
	if err != nil {
		tb.Fatalf("NewKeyRing: %v", err)
	}
	return ring
}

var testInfo = mcp.Implementation{Name: "baton-test", Version: "1.2.3"}

// newTestServer builds a server with the fixed key ring and a discard
// logger; opts may set anything else.
func newTestServer(tb testing.TB, opts *Options) *Server {
	tb.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.StateKeys == nil {
		o.StateKeys = testRing(tb)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s, err := New(testInfo, &o)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return s
}

// mustAddTool registers a tool or fails the test.
func mustAddTool(tb testing.TB, s *Server, t Tool, h ToolHandler, opts ...ToolOption) {
	tb.Helper()
	if err := s.AddTool(t, h, opts...); err != nil {
		tb.Fatalf("AddTool(%s): %v", t.Name, err)
	}
}

// textTool returns a tool with no declared arguments that answers text.
func textTool(s *Server, tb testing.TB, name, text string) {
	tb.Helper()
	mustAddTool(tb, s, Tool{Name: name}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		return TextResult(text), nil
	})
}

// confirmForm is a form with one required boolean field "ok".
func confirmForm(tb testing.TB, message string) *elicit.Request {
	tb.Helper()
	f, err := elicit.NewForm(message, elicit.Boolean("ok").Required())
	if err != nil {
		tb.Fatalf("NewForm: %v", err)
	}
	return f
}

func decodeObject(tb testing.TB, b []byte) map[string]any {
	tb.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("not a JSON object: %v\n%s", err, b)
	}
	return m
}

// checkServerInfo asserts the result _meta carries this server's identity.
func checkServerInfo(tb testing.TB, res map[string]any) {
	tb.Helper()
	meta, _ := res["_meta"].(map[string]any)
	info, _ := meta[metaServerInfo].(map[string]any)
	if info["name"] != testInfo.Name || info["version"] != testInfo.Version {
		tb.Errorf("_meta serverInfo = %v, want %s %s", meta[metaServerInfo], testInfo.Name, testInfo.Version)
	}
}

// toolText returns the concatenated text of a tool result and its isError.
func toolText(tb testing.TB, res map[string]any) (string, bool) {
	tb.Helper()
	blocks, ok := res["content"].([]any)
	if !ok {
		tb.Fatalf("tool result without content array: %v", res)
	}
	var sb strings.Builder
	for _, b := range blocks {
		m, _ := b.(map[string]any)
		if m["type"] == "text" {
			s, _ := m["text"].(string)
			sb.WriteString(s)
		}
	}
	isErr, _ := res["isError"].(bool)
	return sb.String(), isErr
}

// irr is an input_required result.
type irr struct {
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
}

// accept is the ElicitResult accepting the confirm form.
func accept(ok bool) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{"ok": ok}}
}

// receive waits for a value on ch, bounded by waitLimit.
func receive[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		tb.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
