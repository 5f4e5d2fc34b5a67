package server

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/content"
)

// headerServer has one tool, one prompt and one resource, each answering
// "ok", and a prompt and a resource whose names need base64 in Mcp-Name
// (tool names are ASCII only).
func headerServer(t *testing.T) *Server {
	t.Helper()
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "ok")
	prompt := func(context.Context, *PromptRequest) (*PromptResult, error) {
		return &PromptResult{Messages: []PromptMessage{{Role: content.RoleUser, Content: content.Text("ok")}}}, nil
	}
	resource := func(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{Contents: []content.ResourceContents{content.TextContents(r.URI, "text/plain", "ok")}}, nil
	}
	for _, name := range []string{"greet", "héllo wörld"} {
		if err := s.AddPrompt(Prompt{Name: name}, prompt); err != nil {
			t.Fatal(err)
		}
	}
	for _, uri := range []string{"file:///doc.txt", "file:///café.txt"} {
		if err := s.AddResource(Resource{URI: uri, Name: uri}, resource); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestStandardHeaders(t *testing.T) {
	s := headerServer(t)
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }

	ok := []struct {
		name string
		req  *rpc
	}{
		{"tools/call", toolCall(1, "hello", nil)},
		{"prompts/get", call(1, "prompts/get", map[string]any{"name": "greet"})},
		{"resources/read", call(1, "resources/read", map[string]any{"uri": "file:///doc.txt"})},
		{"whitespace around values", toolCall(1, "hello", nil).
			header(HeaderProtocolVersion, " "+testVersion+"\t").
			header(HeaderMethod, "\ttools/call ").
			header(HeaderName, "  hello ")},
		{"base64 Mcp-Name", call(1, "prompts/get", map[string]any{"name": "héllo wörld"}).header(HeaderName, b64("héllo wörld"))},
		{"base64 Mcp-Name of a non-ASCII URI", call(1, "resources/read", map[string]any{"uri": "file:///café.txt"}).header(HeaderName, b64("file:///café.txt"))},
		{"base64 Mcp-Name of an ASCII name", toolCall(1, "hello", nil).header(HeaderName, b64("hello"))},
		{"base64 Mcp-Name of a URI", call(1, "resources/read", map[string]any{"uri": "file:///doc.txt"}).header(HeaderName, b64("file:///doc.txt"))},
		{"no Mcp-Name for a list", call(1, "tools/list", nil)},
	}
	for _, tt := range ok {
		t.Run("accept/"+tt.name, func(t *testing.T) {
			completeResultRec(t, do(t, s, tt.req), "1")
		})
	}

	bad := []struct {
		name    string
		req     *rpc
		message string
	}{
		{"missing MCP-Protocol-Version", call(2, "tools/list", nil).without(HeaderProtocolVersion), "MCP-Protocol-Version header is required"},
		{"mismatched MCP-Protocol-Version", call(2, "tools/list", nil).header(HeaderProtocolVersion, "2025-11-25"), `MCP-Protocol-Version is "2025-11-25"`},
		{"repeated MCP-Protocol-Version", call(2, "tools/list", nil).multi(HeaderProtocolVersion, testVersion, testVersion), "more than once"},
		{"missing Mcp-Method", call(2, "tools/list", nil).without(HeaderMethod), "Mcp-Method header is required"},
		{"mismatched Mcp-Method", call(2, "tools/list", nil).header(HeaderMethod, "prompts/list"), `Mcp-Method is "prompts/list"`},
		{"Mcp-Method differs in case", call(2, "tools/list", nil).header(HeaderMethod, "Tools/List"), "Mcp-Method"},
		{"control character", call(2, "tools/list", nil).header(HeaderMethod, "tools/list\x01"), "control character"},
		{"tools/call without Mcp-Name", toolCall(2, "hello", nil).without(HeaderName), "Mcp-Name header is required for tools/call"},
		{"tools/call with another Mcp-Name", toolCall(2, "hello", nil).header(HeaderName, "other"), `Mcp-Name is "other"`},
		{"tools/call Mcp-Name differs in case", toolCall(2, "hello", nil).header(HeaderName, "Hello"), "Mcp-Name"},
		{"prompts/get without Mcp-Name", call(2, "prompts/get", map[string]any{"name": "greet"}).without(HeaderName), "required for prompts/get"},
		{"prompts/get with another Mcp-Name", call(2, "prompts/get", map[string]any{"name": "greet"}).header(HeaderName, "hello"), `body names "greet"`},
		{"resources/read without Mcp-Name", call(2, "resources/read", map[string]any{"uri": "file:///doc.txt"}).without(HeaderName), "required for resources/read"},
		{"resources/read with another Mcp-Name", call(2, "resources/read", map[string]any{"uri": "file:///doc.txt"}).header(HeaderName, "file:///other.txt"), "Mcp-Name"},
		{"base64 Mcp-Name of another name", toolCall(2, "hello", nil).header(HeaderName, b64("world")), `Mcp-Name is "world"`},
		{"base64 Mcp-Name without padding", call(2, "prompts/get", map[string]any{"name": "héllo wörld"}).header(HeaderName, "=?base64?"+base64.RawStdEncoding.EncodeToString([]byte("héllo wörld"))+"?="), "invalid base64"},
		{"base64 Mcp-Name with bad characters", toolCall(2, "hello", nil).header(HeaderName, "=?base64?aGV*bG8=?="), "invalid base64"},
		{"raw Mcp-Name for a name needing base64", call(2, "prompts/get", map[string]any{"name": "héllo wörld"}).header(HeaderName, "h?llo w?rld"), "Mcp-Name"},
	}
	for _, tt := range bad {
		t.Run("reject/"+tt.name, func(t *testing.T) {
			e := wantErrorRec(t, do(t, s, tt.req), http.StatusBadRequest, -32020, "2")
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
		})
	}
}

// multi sets a header to several values.
func (c *rpc) multi(k string, vs ...string) *rpc {
	c.headers[http.CanonicalHeaderKey(k)] = vs
	c.drop = removeString(c.drop, k)
	return c
}

func removeString(list []string, s string) []string {
	out := list[:0]
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}

// TestHeaderNamesCaseInsensitive sends header names in odd cases on a real
// connection: the server must match them whatever their case.
func TestHeaderNamesCaseInsensitive(t *testing.T) {
	s := headerServer(t)
	ts := httptest.NewServer(s)
	defer ts.Close()

	body := toolCall(1, "hello", nil).encode(t)
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\ncontent-type: application/json\r\n"+
		"mcp-protocol-version: %s\r\nMCP-METHOD: tools/call\r\nmCp-NaMe: hello\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n%s", ts.Listener.Addr(), testVersion, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	r := parseResponse(t, b)
	if r.Error != nil {
		t.Fatalf("error %d: %s", r.Error.Code, r.Error.Message)
	}
}

// paramServer has a tool whose arguments mirror into Mcp-Param headers.
func paramServer(t *testing.T) (*Server, *int) {
	t.Helper()
	s := newTestServer(t, nil)
	calls := new(int)
	mustAddTool(t, s, Tool{
		Name: "deploy",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"region":{"type":"string","x-mcp-header":"Region"},` +
			`"replicas":{"type":"integer","x-mcp-header":"Replicas"},` +
			`"dryRun":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
			`"note":{"type":"string"}}}`),
	}, func(context.Context, *ToolRequest) (*ToolResult, error) {
		*calls++
		return TextResult("deployed"), nil
	}, SkipInputValidation()) // headers only: schema validation is tested elsewhere
	return s, calls
}

func TestParamHeaders(t *testing.T) {
	s, calls := paramServer(t)
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	deploy := func(args map[string]any, headers ...string) *rpc {
		c := toolCall(3, "deploy", args)
		for i := 0; i+1 < len(headers); i += 2 {
			c.header(headers[i], headers[i+1])
		}
		return c
	}

	ok := []struct {
		name string
		req  *rpc
	}{
		{"no mirrored arguments, no headers", deploy(map[string]any{"note": "x"})},
		{"no arguments at all", deploy(nil)},
		{"null argument needs no header", deploy(map[string]any{"region": nil})},
		{"string", deploy(map[string]any{"region": "eu-west-1"}, "Mcp-Param-Region", "eu-west-1")},
		{"string with whitespace around the header value", deploy(map[string]any{"region": "eu-west-1"}, "Mcp-Param-Region", "  eu-west-1\t")},
		{"header name in lower case", deploy(map[string]any{"region": "eu"}, "mcp-param-region", "eu")},
		{"base64 string", deploy(map[string]any{"region": "zürich"}, "Mcp-Param-Region", b64("zürich"))},
		{"literal value that looks base64", deploy(map[string]any{"region": "ZXU="}, "Mcp-Param-Region", "ZXU=")},
		{"literal value with only the prefix", deploy(map[string]any{"region": "=?base64?ZXU="}, "Mcp-Param-Region", "=?base64?ZXU=")},
		{"integer", deploy(map[string]any{"replicas": 3}, "Mcp-Param-Replicas", "3")},
		{"integer compared numerically (3.0)", deploy(map[string]any{"replicas": 3}, "Mcp-Param-Replicas", "3.0")},
		{"integer compared numerically (3e0)", deploy(map[string]any{"replicas": json.RawMessage("3")}, "Mcp-Param-Replicas", "3e0")},
		{"integer spelled 30e-1 in the body", deploy(map[string]any{"replicas": json.RawMessage("30e-1")}, "Mcp-Param-Replicas", "3")},
		{"boolean true", deploy(map[string]any{"dryRun": true}, "Mcp-Param-Dry-Run", "true")},
		{"boolean false", deploy(map[string]any{"dryRun": false}, "Mcp-Param-Dry-Run", "false")},
		{"all three", deploy(map[string]any{"region": "eu", "replicas": 2, "dryRun": true},
			"Mcp-Param-Region", "eu", "Mcp-Param-Replicas", "2", "Mcp-Param-Dry-Run", "true")},
	}
	for _, tt := range ok {
		t.Run("accept/"+tt.name, func(t *testing.T) {
			res := completeResultRec(t, do(t, s, tt.req), "3")
			if text, isErr := toolText(t, res); text != "deployed" || isErr {
				t.Errorf("result %q isError=%v", text, isErr)
			}
		})
	}

	bad := []struct {
		name    string
		req     *rpc
		message string
	}{
		{"argument without its header", deploy(map[string]any{"region": "eu"}), `argument "region" requires the Mcp-Param-Region header`},
		{"header without its argument", deploy(map[string]any{"note": "x"}, "Mcp-Param-Replicas", "2"), `Mcp-Param-Replicas is set but argument "replicas" is absent`},
		{"string mismatch", deploy(map[string]any{"region": "eu"}, "Mcp-Param-Region", "us"), `Mcp-Param-Region does not match argument "region"`},
		{"string differs in case", deploy(map[string]any{"region": "eu"}, "Mcp-Param-Region", "EU"), "does not match"},
		{"base64 of another value", deploy(map[string]any{"region": "zürich"}, "Mcp-Param-Region", b64("zurich")), "does not match"},
		{"base64 without padding", deploy(map[string]any{"region": "eu"}, "Mcp-Param-Region", "=?base64?ZXU?="), "invalid base64"},
		{"base64 with wrong padding", deploy(map[string]any{"region": "eu"}, "Mcp-Param-Region", "=?base64?ZXU==?="), "invalid base64"},
		{"integer mismatch", deploy(map[string]any{"replicas": 3}, "Mcp-Param-Replicas", "4"), "does not match"},
		{"integer not a number", deploy(map[string]any{"replicas": 3}, "Mcp-Param-Replicas", "three"), "does not match"},
		{"integer argument that is not a number", deploy(map[string]any{"replicas": "three"}, "Mcp-Param-Replicas", "three"), "does not match"},
		{"boolean mismatch", deploy(map[string]any{"dryRun": true}, "Mcp-Param-Dry-Run", "false"), "does not match"},
		{"boolean in another case", deploy(map[string]any{"dryRun": true}, "Mcp-Param-Dry-Run", "True"), "does not match"},
		{"boolean as 1", deploy(map[string]any{"dryRun": true}, "Mcp-Param-Dry-Run", "1"), "does not match"},
		{"control character", deploy(map[string]any{"region": "eu"}, "Mcp-Param-Region", "e\x7fu"), "control character"},
	}
	for _, tt := range bad {
		t.Run("reject/"+tt.name, func(t *testing.T) {
			before := *calls
			e := wantErrorRec(t, do(t, s, tt.req), http.StatusBadRequest, -32020, "3")
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
			if *calls != before {
				t.Error("the handler ran")
			}
		})
	}
}

func TestParamHeadersRegistration(t *testing.T) {
	s := newTestServer(t, nil)
	h := func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult(""), nil }
	for _, tt := range []struct {
		name, schema, message string
	}{
		{"object type", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`, "primitive"},
		{"array type", `{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}`, "primitive"},
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`, "not a valid header name"},
		{"bad name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A B"}}}`, "not a valid header name"},
		{"duplicate header", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"X"},"b":{"type":"string","x-mcp-header":"x"}}}`, "both map to header Mcp-Param-X"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := s.AddTool(Tool{Name: "t", InputSchema: json.RawMessage(tt.schema)}, h)
			if err == nil || !strings.Contains(err.Error(), tt.message) {
				t.Errorf("AddTool error = %v, want one containing %q", err, tt.message)
			}
		})
	}
}
