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

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// headerServer has one tool, one prompt and one resource, each answering
// "ok", and a prompt and a resource whose names need base64 in Mcp-Name
// (tool names are ASCII only).
func headerServer(t *testing.T) *Server {
	t.Helper()
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "ok")
	prompt := func(context.Context, *PromptRequest) (*PromptResult, error) {
		return &PromptResult{Messages: []PromptMessage{{Role: mcp.RoleUser, Content: mcp.Text("ok")}}}, nil
	}
	resource := func(_ context.Context, r *ResourceRequest) (*ResourceResult, error) {
		return &ResourceResult{Contents: []mcp.ResourceContents{mcp.TextContents(r.URI, "text/plain", "ok")}}, nil
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
	c := newClient(t, s, "")
	b64 := func(s string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?=" }
	hdr := mcptest.WithHeader
	tool := func(opts ...mcptest.CallOption) func() *mcptest.Response {
		return func() *mcptest.Response { return sendTool(t, c, "hello", nil, opts...) }
	}
	prompt := func(name string, opts ...mcptest.CallOption) func() *mcptest.Response {
		return func() *mcptest.Response { return send(t, c, "prompts/get", map[string]any{"name": name}, opts...) }
	}
	read := func(uri string, opts ...mcptest.CallOption) func() *mcptest.Response {
		return func() *mcptest.Response { return send(t, c, "resources/read", map[string]any{"uri": uri}, opts...) }
	}
	list := func(opts ...mcptest.CallOption) func() *mcptest.Response {
		return func() *mcptest.Response { return send(t, c, "tools/list", nil, opts...) }
	}

	ok := []struct {
		name string
		send func() *mcptest.Response
	}{
		{"tools/call", tool()},
		{"prompts/get", prompt("greet")},
		{"resources/read", read("file:///doc.txt")},
		{"whitespace around values", tool(
			hdr(headerProtocolVersion, " "+testVersion+"\t"),
			hdr(headerMethod, "\ttools/call "),
			hdr(headerName, "  hello "))},
		{"base64 Mcp-Name", prompt("héllo wörld", hdr(headerName, b64("héllo wörld")))},
		{"base64 Mcp-Name of a non-ASCII URI", read("file:///café.txt", hdr(headerName, b64("file:///café.txt")))},
		{"base64 Mcp-Name of an ASCII name", tool(hdr(headerName, b64("hello")))},
		{"base64 Mcp-Name of a URI", read("file:///doc.txt", hdr(headerName, b64("file:///doc.txt")))},
		{"no Mcp-Name for a list", list()},
	}
	for _, tt := range ok {
		t.Run("accept/"+tt.name, func(t *testing.T) {
			completeResult(t, tt.send())
		})
	}

	// twice sends MCP-Protocol-Version twice, from a client whose
	// Options.Header holds both values.
	twice := func() *mcptest.Response {
		c := newClientOpts(t, mcptest.Handler(s), &mcptest.Options{Header: http.Header{headerProtocolVersion: {testVersion, testVersion}}})
		return send(t, c, "tools/list", nil)
	}
	bad := []struct {
		name    string
		send    func() *mcptest.Response
		message string
	}{
		{"missing MCP-Protocol-Version", list(mcptest.WithoutHeader(headerProtocolVersion)), "MCP-Protocol-Version header is required"},
		{"mismatched MCP-Protocol-Version", list(hdr(headerProtocolVersion, "2025-11-25")), `MCP-Protocol-Version is "2025-11-25"`},
		{"repeated MCP-Protocol-Version", twice, "more than once"},
		{"missing Mcp-Method", list(mcptest.WithoutHeader(headerMethod)), "Mcp-Method header is required"},
		{"mismatched Mcp-Method", list(hdr(headerMethod, "prompts/list")), `Mcp-Method is "prompts/list"`},
		{"Mcp-Method differs in case", list(hdr(headerMethod, "Tools/List")), "Mcp-Method"},
		{"control character", list(hdr(headerMethod, "tools/list\x01")), "control character"},
		{"tools/call without Mcp-Name", tool(mcptest.WithoutHeader(headerName)), "Mcp-Name header is required for tools/call"},
		{"tools/call with another Mcp-Name", tool(hdr(headerName, "other")), `Mcp-Name is "other"`},
		{"tools/call Mcp-Name differs in case", tool(hdr(headerName, "Hello")), "Mcp-Name"},
		{"prompts/get without Mcp-Name", prompt("greet", mcptest.WithoutHeader(headerName)), "required for prompts/get"},
		{"prompts/get with another Mcp-Name", prompt("greet", hdr(headerName, "hello")), `body names "greet"`},
		{"resources/read without Mcp-Name", read("file:///doc.txt", mcptest.WithoutHeader(headerName)), "required for resources/read"},
		{"resources/read with another Mcp-Name", read("file:///doc.txt", hdr(headerName, "file:///other.txt")), "Mcp-Name"},
		{"base64 Mcp-Name of another name", tool(hdr(headerName, b64("world"))), `Mcp-Name is "world"`},
		{"base64 Mcp-Name without padding", prompt("héllo wörld", hdr(headerName, "=?base64?"+base64.RawStdEncoding.EncodeToString([]byte("héllo wörld"))+"?=")), "invalid base64"},
		{"base64 Mcp-Name with bad characters", tool(hdr(headerName, "=?base64?aGV*bG8=?=")), "invalid base64"},
		{"raw Mcp-Name for a name needing base64", prompt("héllo wörld", hdr(headerName, "h?llo w?rld")), "Mcp-Name"},
	}
	for _, tt := range bad {
		t.Run("reject/"+tt.name, func(t *testing.T) {
			e := wantError(t, tt.send(), http.StatusBadRequest, -32020)
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
		})
	}
}

// TestHeaderNamesCaseInsensitive sends header names in odd cases on a real
// connection: the server must match them whatever their case. The request
// is written by hand because the odd case of its header names is the point
// (Go's client would canonicalise them).
func TestHeaderNamesCaseInsensitive(t *testing.T) {
	s := headerServer(t)
	ts := httptest.NewServer(s)
	defer ts.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","_meta":{"` + metaProtocolVersion + `":"` + testVersion + `","` + metaClientCaps + `":{}}}}`
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
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *mcptest.Error  `json:"error"`
	}
	if err := json.Unmarshal(b, &r); err != nil || r.Error != nil || r.Result == nil {
		t.Fatalf("response %s (%v)", b, err)
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
	c := newClient(t, s, "")
	type deployCall struct {
		args    map[string]any
		headers []string
	}
	deploy := func(args map[string]any, headers ...string) deployCall { return deployCall{args, headers} }
	// send sends the call with its Mcp-Param headers (and no others the
	// client would derive: it derives none for Mcp-Param-*).
	send := func(d deployCall) *mcptest.Response {
		var opts []mcptest.CallOption
		for i := 0; i+1 < len(d.headers); i += 2 {
			opts = append(opts, mcptest.WithHeader(d.headers[i], d.headers[i+1]))
		}
		var args any
		if d.args != nil {
			args = d.args
		}
		return sendTool(t, c, "deploy", args, opts...)
	}

	ok := []struct {
		name string
		req  deployCall
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
			res := completeResult(t, send(tt.req))
			if text, isErr := toolText(t, res); text != "deployed" || isErr {
				t.Errorf("result %q isError=%v", text, isErr)
			}
		})
	}

	bad := []struct {
		name    string
		req     deployCall
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
			e := wantError(t, send(tt.req), http.StatusBadRequest, -32020)
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
