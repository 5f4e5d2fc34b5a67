package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestEnvelopeRequiredKeys(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")

	tests := []struct {
		name    string
		req     *rpc
		id      string
		message string
	}{
		{
			name:    "no params",
			req:     call(7, "server/discover", nil).body(`{"jsonrpc":"2.0","id":7,"method":"server/discover"}`),
			id:      "7",
			message: "params with _meta",
		},
		{
			name:    "null params",
			req:     call("abc", "server/discover", nil).body(`{"jsonrpc":"2.0","id":"abc","method":"server/discover","params":null}`),
			id:      `"abc"`,
			message: "params with _meta",
		},
		{
			name:    "no _meta",
			req:     call("abc", "tools/list", nil).withoutMeta(),
			id:      `"abc"`,
			message: "params._meta is required",
		},
		{
			name:    "no protocolVersion",
			req:     call(1, "tools/list", nil).withMeta(metaProtocolVersion, nil),
			id:      "1",
			message: "missing " + metaProtocolVersion,
		},
		{
			name:    "empty protocolVersion",
			req:     call(1, "tools/list", nil).withMeta(metaProtocolVersion, ""),
			id:      "1",
			message: "missing " + metaProtocolVersion,
		},
		{
			name:    "no clientCapabilities",
			req:     call(2, "tools/call", map[string]any{"name": "hello"}).withMeta(metaClientCaps, nil),
			id:      "2",
			message: "missing " + metaClientCaps,
		},
		{
			name:    "null clientCapabilities",
			req:     call(2, "tools/list", nil).caps(`null`),
			id:      "2",
			message: "missing " + metaClientCaps,
		},
		{
			name:    "clientCapabilities not an object",
			req:     call(3, "tools/list", nil).caps(`"all"`),
			id:      "3",
			message: "must be an object",
		},
		{
			name:    "bad logLevel",
			req:     call(4, "tools/list", nil).withMeta("io.modelcontextprotocol/logLevel", "verbose"),
			id:      "4",
			message: `unknown log level "verbose"`,
		},
		{
			name:    "logLevel not a string",
			req:     call(4, "tools/list", nil).withMeta("io.modelcontextprotocol/logLevel", 3),
			id:      "4",
			message: "must be a string",
		},
		{
			name:    "fractional progressToken",
			req:     call(5, "tools/list", nil).withMeta("progressToken", 1.5),
			id:      "5",
			message: "progressToken must be a string or an integer",
		},
		{
			name:    "boolean progressToken",
			req:     call(5, "tools/list", nil).withMeta("progressToken", true),
			id:      "5",
			message: "progressToken must be a string or an integer",
		},
		{
			name:    "object progressToken",
			req:     call(5, "tools/list", nil).withMeta("progressToken", map[string]any{}),
			id:      "5",
			message: "progressToken must be a string or an integer",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.req.raw != nil {
				// A raw body has no _meta, so no version header either.
				tt.req.header(HeaderProtocolVersion, testVersion)
			}
			e := wantErrorRec(t, do(t, s, tt.req), http.StatusBadRequest, -32602, tt.id)
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

	tests := []struct {
		name  string
		req   *rpc
		check func(t *testing.T, m RequestMeta)
	}{
		{
			name: "no clientInfo",
			req:  toolCall(1, "meta", nil),
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
			req: toolCall(2, "meta", nil).
				withMeta("io.modelcontextprotocol/clientInfo", map[string]any{"name": "c", "version": "9"}).
				withMeta("io.modelcontextprotocol/logLevel", "warning").
				withMeta("progressToken", "tok").
				caps(`{"elicitation":{"form":{}},"sampling":{}}`),
			check: func(t *testing.T, m RequestMeta) {
				if m.ClientInfo == nil || m.ClientInfo.Name != "c" || m.ClientInfo.Version != "9" {
					t.Errorf("ClientInfo = %+v", m.ClientInfo)
				}
				if m.LogLevel != LevelWarning {
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
			req:  toolCall(3, "meta", nil).withMeta("progressToken", 42),
			check: func(t *testing.T, m RequestMeta) {
				if string(m.ProgressToken) != "42" {
					t.Errorf("ProgressToken = %s", m.ProgressToken)
				}
			},
		},
		{
			name: "null progressToken is none",
			req:  toolCall(4, "meta", nil).withMeta("progressToken", json.RawMessage("null")),
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
			id := string(mustJSON(t, tt.req.id))
			res := completeResultRec(t, do(t, s, tt.req), id)
			if text, isErr := toolText(t, res); text != "ok" || isErr {
				t.Fatalf("result %q isError=%v", text, isErr)
			}
			tt.check(t, got)
		})
	}
}

func TestProtocolVersion(t *testing.T) {
	s := newTestServer(t, nil)

	t.Run("unsupported", func(t *testing.T) {
		req := call(9, "server/discover", nil).withMeta(metaProtocolVersion, "1900-01-01")
		e := wantErrorRec(t, do(t, s, req), http.StatusBadRequest, -32022, "9")
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
		req := call(9, "tools/list", nil).withMeta(metaProtocolVersion, "2025-11-25")
		wantErrorRec(t, do(t, s, req), http.StatusBadRequest, -32022, "9")
	})
	t.Run("header mismatch comes first", func(t *testing.T) {
		req := call(10, "server/discover", nil).withMeta(metaProtocolVersion, "1900-01-01").header(HeaderProtocolVersion, testVersion)
		e := wantErrorRec(t, do(t, s, req), http.StatusBadRequest, -32020, "10")
		if !strings.Contains(e.Message, HeaderProtocolVersion) {
			t.Errorf("message %q does not name the header", e.Message)
		}
	})
	t.Run("missing header with unsupported version", func(t *testing.T) {
		req := call(11, "server/discover", nil).withMeta(metaProtocolVersion, "1900-01-01").without(HeaderProtocolVersion)
		wantErrorRec(t, do(t, s, req), http.StatusBadRequest, -32020, "11")
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
