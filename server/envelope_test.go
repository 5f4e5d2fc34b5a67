package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// envelope returns the _meta of a valid request (protocol version and no
// client capabilities) with edits applied: a nil value removes the key.
// Tests about the envelope send it as params._meta, which mcptest passes
// on as given.
func envelope(edits map[string]any) map[string]any {
	m := map[string]any{metaProtocolVersion: testVersion, metaClientCaps: map[string]any{}}
	for k, v := range edits {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func TestEnvelopeRequiredKeys(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")
	c := newClient(t, s, "")
	// withMeta sends method with params whose _meta is the envelope with
	// edits.
	withMeta := func(method string, params map[string]any, edits map[string]any) func() *mcptest.Response {
		return func() *mcptest.Response {
			p := map[string]any{"_meta": envelope(edits)}
			for k, v := range params {
				p[k] = v
			}
			return send(t, c, method, p)
		}
	}
	// raw posts a body that cannot carry an envelope, with the client's
	// headers.
	raw := func(body string) func() *mcptest.Response {
		return func() *mcptest.Response { return sendRaw(t, c, body) }
	}

	tests := []struct {
		name    string
		send    func() *mcptest.Response
		id      string // the id echoed; "" for the request's own
		message string
	}{
		{
			name:    "no params",
			send:    raw(`{"jsonrpc":"2.0","id":7,"method":"server/discover"}`),
			id:      "7",
			message: "params with _meta",
		},
		{
			name:    "null params",
			send:    raw(`{"jsonrpc":"2.0","id":"abc","method":"server/discover","params":null}`),
			id:      `"abc"`,
			message: "params with _meta",
		},
		{
			name:    "no _meta",
			send:    raw(`{"jsonrpc":"2.0","id":"abc","method":"tools/list","params":{}}`),
			id:      `"abc"`,
			message: "params._meta is required",
		},
		{
			name:    "no protocolVersion",
			send:    withMeta("tools/list", nil, map[string]any{metaProtocolVersion: nil}),
			message: "missing " + metaProtocolVersion,
		},
		{
			name:    "empty protocolVersion",
			send:    withMeta("tools/list", nil, map[string]any{metaProtocolVersion: ""}),
			message: "missing " + metaProtocolVersion,
		},
		{
			name:    "no clientCapabilities",
			send:    withMeta("tools/call", map[string]any{"name": "hello"}, map[string]any{metaClientCaps: nil}),
			message: "missing " + metaClientCaps,
		},
		{
			name:    "null clientCapabilities",
			send:    withMeta("tools/list", nil, map[string]any{metaClientCaps: json.RawMessage(`null`)}),
			message: "missing " + metaClientCaps,
		},
		{
			name:    "clientCapabilities not an object",
			send:    withMeta("tools/list", nil, map[string]any{metaClientCaps: "all"}),
			message: "must be an object",
		},
		{
			name:    "bad logLevel",
			send:    func() *mcptest.Response { return send(t, c, "tools/list", nil, mcptest.WithLogLevel("verbose")) },
			message: `unknown log level "verbose"`,
		},
		{
			name:    "logLevel not a string",
			send:    withMeta("tools/list", nil, map[string]any{"io.modelcontextprotocol/logLevel": 3}),
			message: "must be a string",
		},
		{
			name:    "fractional progressToken",
			send:    withMeta("tools/list", nil, map[string]any{"progressToken": 1.5}),
			message: "progressToken must be a string or an integer",
		},
		{
			name:    "boolean progressToken",
			send:    withMeta("tools/list", nil, map[string]any{"progressToken": true}),
			message: "progressToken must be a string or an integer",
		},
		{
			name:    "object progressToken",
			send:    withMeta("tools/list", nil, map[string]any{"progressToken": map[string]any{}}),
			message: "progressToken must be a string or an integer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e *mcptest.Error
			if tt.id == "" {
				e = wantError(t, tt.send(), http.StatusBadRequest, -32602)
			} else {
				e = wantErrorID(t, tt.send(), http.StatusBadRequest, -32602, tt.id)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
		})
	}
}

func TestEnvelopeOptionalKeys(t *testing.T) {
	s := newTestServer(t, nil)
	var got RequestMeta
	mustAddTool(t, s, Tool{Name: "meta"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		got = req.Meta
		return TextResult("ok"), nil
	})
	c := newClient(t, s, "")

	tests := []struct {
		name  string
		send  func() *mcptest.Response
		check func(t *testing.T, m RequestMeta)
	}{
		{
			// mcptest always sends clientInfo; this envelope has none.
			name: "no clientInfo",
			send: func() *mcptest.Response {
				return send(t, c, "tools/call", map[string]any{"name": "meta", "_meta": envelope(nil)})
			},
			check: func(t *testing.T, m RequestMeta) {
				if m.ClientInfo != nil {
					t.Errorf("ClientInfo = %+v, want nil", m.ClientInfo)
				}
				if m.LogLevel != "" || m.ProgressToken != nil {
					t.Errorf("LogLevel %q, ProgressToken %s: want none", m.LogLevel, m.ProgressToken)
				}
			},
		},
		{
			name: "clientInfo, logLevel and string progressToken",
			send: func() *mcptest.Response {
				c := newClientOpts(t, mcptest.Handler(s), &mcptest.Options{
					ClientInfo:   mcp.Implementation{Name: "c", Version: "9"},
					LogLevel:     "warning",
					Capabilities: capsOf(t, `{"elicitation":{"form":{}},"sampling":{}}`),
				})
				return sendTool(t, c, "meta", nil, mcptest.WithProgressToken("tok"))
			},
			check: func(t *testing.T, m RequestMeta) {
				if m.ClientInfo == nil || m.ClientInfo.Name != "c" || m.ClientInfo.Version != "9" {
					t.Errorf("ClientInfo = %+v", m.ClientInfo)
				}
				if m.LogLevel != "warning" {
					t.Errorf("LogLevel = %q", m.LogLevel)
				}
				if string(m.ProgressToken) != `"tok"` {
					t.Errorf("ProgressToken = %s", m.ProgressToken)
				}
				if !m.ClientCapabilities.CanElicitForm() || !m.ClientCapabilities.CanSample() || m.ClientCapabilities.CanListRoots() {
					t.Errorf("ClientCapabilities = %+v", m.ClientCapabilities)
				}
				if m.ProtocolVersion != testVersion {
					t.Errorf("ProtocolVersion = %q", m.ProtocolVersion)
				}
			},
		},
		{
			name: "integer progressToken",
			send: func() *mcptest.Response { return sendTool(t, c, "meta", nil, mcptest.WithProgressToken(42)) },
			check: func(t *testing.T, m RequestMeta) {
				if string(m.ProgressToken) != "42" {
					t.Errorf("ProgressToken = %s", m.ProgressToken)
				}
			},
		},
		{
			name: "null progressToken is none",
			send: func() *mcptest.Response {
				return send(t, c, "tools/call", map[string]any{"name": "meta", "_meta": envelope(map[string]any{"progressToken": json.RawMessage("null")})})
			},
			check: func(t *testing.T, m RequestMeta) {
				if m.ProgressToken != nil {
					t.Errorf("ProgressToken = %s, want nil", m.ProgressToken)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got = RequestMeta{}
			res := completeResult(t, tt.send())
			if text, isErr := toolText(t, res); text != "ok" || isErr {
				t.Fatalf("result %q isError=%v", text, isErr)
			}
			tt.check(t, got)
		})
	}
}

func TestProtocolVersion(t *testing.T) {
	s := newTestServer(t, nil)
	c := newClient(t, s, "")
	// declaring sends method with _meta declaring version, and the header
	// as opts set it.
	declaring := func(method, version string, opts ...mcptest.CallOption) *mcptest.Response {
		return send(t, c, method, map[string]any{"_meta": envelope(map[string]any{metaProtocolVersion: version})}, opts...)
	}

	t.Run("unsupported", func(t *testing.T) {
		e := wantError(t, declaring("server/discover", "1900-01-01", mcptest.WithHeader(headerProtocolVersion, "1900-01-01")), http.StatusBadRequest, -32022)
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatalf("data: %v (%s)", err, e.Data)
		}
		if len(data.Supported) != 1 || data.Supported[0] != testVersion || data.Requested != "1900-01-01" {
			t.Errorf("data = %s", e.Data)
		}
	})
	t.Run("legacy version in a modern envelope", func(t *testing.T) {
		wantError(t, declaring("tools/list", "2025-11-25", mcptest.WithHeader(headerProtocolVersion, "2025-11-25")), http.StatusBadRequest, -32022)
	})
	t.Run("header mismatch comes first", func(t *testing.T) {
		e := wantError(t, declaring("server/discover", "1900-01-01"), http.StatusBadRequest, -32020)
		if !strings.Contains(e.Message, headerProtocolVersion) {
			t.Errorf("message %q does not name the header", e.Message)
		}
	})
	t.Run("missing header with unsupported version", func(t *testing.T) {
		wantError(t, declaring("server/discover", "1900-01-01", mcptest.WithoutHeader(headerProtocolVersion)), http.StatusBadRequest, -32020)
	})
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestDescribeUnmarshalArticles checks the type named in a params decoding
// error reads as English for every Go kind a field may have.
func TestDescribeUnmarshalArticles(t *testing.T) {
	var target struct {
		S string            `json:"s"`
		I int64             `json:"i"`
		U uint8             `json:"u"`
		F float64           `json:"f"`
		B bool              `json:"b"`
		L []string          `json:"l"`
		A [2]int            `json:"a"`
		M map[string]string `json:"m"`
		P *struct{}         `json:"p"`
	}
	for _, tc := range []struct{ body, want string }{
		{`{"s":1}`, "s must be a string, not number"},
		{`{"i":"x"}`, "i must be an integer, not string"},
		{`{"u":"x"}`, "u must be an integer, not string"},
		{`{"f":"x"}`, "f must be a number, not string"},
		{`{"b":1}`, "b must be a boolean, not number"},
		{`{"l":1}`, "l must be an array, not number"},
		{`{"a":1}`, "a must be an array, not number"},
		{`{"m":1}`, "m must be an object, not number"},
		{`{"p":1}`, "p must be an object, not number"},
	} {
		err := json.Unmarshal([]byte(tc.body), &target)
		if err == nil {
			t.Fatalf("%s decoded", tc.body)
		}
		if got := describeUnmarshal(err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.body, got, tc.want)
		}
	}
}
