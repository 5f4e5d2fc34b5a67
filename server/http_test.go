package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcptest"
)

func TestRouting(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")
	c := newClient(t, s, "")

	t.Run("unknown method", func(t *testing.T) {
		e := wantError(t, send(t, c, "tools/frobnicate", nil), http.StatusNotFound, -32601)
		if !strings.Contains(e.Message, "tools/frobnicate") {
			t.Errorf("message %q does not name the method", e.Message)
		}
	})
	for _, m := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tasks/get"} {
		t.Run("removed "+m, func(t *testing.T) {
			r := send(t, c, m, map[string]any{"protocolVersion": testVersion, "capabilities": map[string]any{}})
			wantError(t, r, http.StatusNotFound, -32601)
		})
	}
	t.Run("legacy initialize", func(t *testing.T) {
		// A 2025-11-25 client's first request, which mcptest cannot send:
		// no _meta, no MCP-Protocol-Version, no Mcp-Method.
		body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}}`
		r := sendRaw(t, c, body, mcptest.WithoutHeader(headerProtocolVersion), mcptest.WithoutHeader(headerMethod))
		e := wantErrorID(t, r, http.StatusBadRequest, -32022, "0")
		var data struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		if len(data.Supported) != 1 || data.Supported[0] != testVersion || data.Requested != "2025-11-25" {
			t.Errorf("data = %s", e.Data)
		}
	})

	// mcptest only posts; these are the other HTTP methods.
	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		t.Run(m, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(m, "/mcp", nil)
			r.Header.Set("Accept", "text/event-stream")
			r.Header.Set(headerSessionID, "abc")
			s.ServeHTTP(rec, r)
			wantHTTPError(t, rec, http.StatusMethodNotAllowed, -32600)
			if a := rec.Header().Get("Allow"); a != http.MethodPost {
				t.Errorf("Allow = %q, want POST", a)
			}
			if rec.Header().Get(headerSessionID) != "" {
				t.Error("a session id was minted")
			}
		})
	}

	t.Run("Content-Type", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/json-seq", "garbage/"} {
			wantErrorID(t, send(t, c, "tools/list", nil, mcptest.WithHeader("Content-Type", ct)), http.StatusUnsupportedMediaType, -32600, "null")
		}
		for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
			completeResult(t, send(t, c, "tools/list", nil, mcptest.WithHeader("Content-Type", ct)))
		}
		completeResult(t, send(t, c, "tools/list", nil, mcptest.WithoutHeader("Content-Type")))
	})

	t.Run("no Mcp-Session-Id minted on success", func(t *testing.T) {
		r := send(t, c, "tools/list", nil, mcptest.WithHeader(headerSessionID, "stale"))
		completeResult(t, r)
		if r.Header.Get(headerSessionID) != "" {
			t.Error("a session id was set")
		}
	})
}

// toolsCallBody is the body of a tools/call of hello whose arguments are
// args (JSON text), with the envelope: written out so its size is exact.
func toolsCallBody(args string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":` + args +
		`,"_meta":{"` + metaProtocolVersion + `":"` + testVersion + `","` + metaClientCaps + `":{}}}}`
}

func TestBodyLimits(t *testing.T) {
	s := newTestServer(t, &Options{MaxRequestBytes: 512, MaxJSONDepth: 8})
	textTool(s, t, "hello", "hi")
	c := newClient(t, s, "")

	t.Run("too large", func(t *testing.T) {
		r := sendTool(t, c, "hello", map[string]any{"pad": strings.Repeat("x", 600)})
		e := wantErrorID(t, r, http.StatusRequestEntityTooLarge, -32600, "null")
		if !strings.Contains(e.Message, "512-byte limit") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("at the limit", func(t *testing.T) {
		pad := 512 - len(toolsCallBody(`{"pad":""}`))
		if pad < 0 {
			t.Fatal("base request too large")
		}
		body := toolsCallBody(`{"pad":"` + strings.Repeat("x", pad) + `"}`)
		if len(body) != 512 {
			t.Fatalf("body is %d bytes", len(body))
		}
		completeResult(t, sendRaw(t, c, body))
		if r := sendRaw(t, c, toolsCallBody(`{"pad":"`+strings.Repeat("x", pad+1)+`"}`)); r.Status != http.StatusRequestEntityTooLarge {
			t.Errorf("one byte over: status %d", r.Status)
		}
	})
	t.Run("too deep", func(t *testing.T) {
		deep := strings.Repeat("[", 9) + strings.Repeat("]", 9)
		r := sendRaw(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"x":`+deep+`}}`)
		e := wantErrorID(t, r, http.StatusBadRequest, -32700, "null")
		if !strings.Contains(e.Message, "nesting") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("deep inside a string is fine", func(t *testing.T) {
		completeResult(t, sendTool(t, c, "hello", map[string]any{"s": strings.Repeat("[{", 40)}))
	})
}

// The members, number and exponent limits refuse a body before it is
// parsed, with -32602 naming the limit; each is configurable.
func TestJSONLimits(t *testing.T) {
	s := newTestServer(t, &Options{MaxJSONMembers: 5, MaxJSONNumberLength: 10, MaxJSONNumberExponent: 20})
	textTool(s, t, "hello", "hi")
	keys := func(n int) json.RawMessage {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		return json.RawMessage("{" + strings.Join(parts, ",") + "}")
	}
	type hello struct {
		args any
		opts []mcptest.CallOption
	}
	// check sends hello on c and wants a result (msg "") or -32602 naming
	// msg, with a null id: the body is refused before it is read.
	check := func(t *testing.T, c *mcptest.Client, h hello, msg string) {
		t.Helper()
		r := sendTool(t, c, "hello", h.args, h.opts...)
		if msg == "" {
			completeResult(t, r)
			return
		}
		e := wantErrorID(t, r, http.StatusBadRequest, -32602, "null")
		if !strings.Contains(e.Message, msg) {
			t.Errorf("message %q, want %q", e.Message, msg)
		}
	}
	c := newClient(t, s, "")
	for _, tc := range []struct {
		name string
		req  hello
		msg  string // "" when within the limits
	}{
		{"members at the limit", hello{args: keys(5)}, ""},
		{"members over the limit", hello{args: keys(6)}, "more than 5 members"},
		{"inputResponses over the limit", hello{opts: []mcptest.CallOption{mcptest.Resume("", keys(6))}}, "more than 5 members"},
		{"number at the limit", hello{args: json.RawMessage(`{"n":-1.234e+20}`)}, ""},
		{"number over the limit", hello{args: json.RawMessage(`{"n":-1.2345e+20}`)}, "11 bytes long, over the limit of 10"},
		{"exponent over the limit", hello{args: json.RawMessage(`{"n":1e-21}`)}, "beyond ±20"},
		{"in strings they do not count", hello{args: map[string]any{"s": `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":1e999999}`}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { check(t, c, tc.req, tc.msg) })
	}
	t.Run("defaults", func(t *testing.T) {
		d := newTestServer(t, nil)
		textTool(d, t, "hello", "hi")
		dc := newClient(t, d, "")
		check(t, dc, hello{args: keys(10000)}, "")
		for _, tc := range []struct {
			req hello
			msg string
		}{
			{hello{args: keys(10001)}, "more than 10000 members"},
			{hello{args: json.RawMessage(`{"n":1e401}`)}, "beyond ±400"},
			{hello{args: json.RawMessage(`{"n":` + strings.Repeat("1", 101) + `}`)}, "over the limit of 100"},
			{hello{args: json.RawMessage(`{"n":1e-999999}`), opts: []mcptest.CallOption{mcptest.Resume("garbage", keys(1))}}, "beyond ±400"},
		} {
			check(t, dc, tc.req, tc.msg)
		}
	})
}

// TestMalformedMessages posts bodies that are not valid requests, as
// given.
func TestMalformedMessages(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")
	c := newClient(t, s, "")
	tests := []struct {
		name, body string
		status     int
		code       int
		id         string
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":1,"method":`, 400, -32700, "null"},
		{"empty body", ``, 400, -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}]`, 400, -32600, "null"},
		{"not an object", `"tools/list"`, 400, -32600, "null"},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","id":4,"method":"tools/list","params":{}}`, 400, -32600, "4"},
		{"params array", `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}`, 400, -32600, "5"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}`, 400, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}`, 400, -32600, "null"},
		{"client response", `{"jsonrpc":"2.0","id":6,"result":{}}`, 400, -32600, "null"},
		{"client error response", `{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"x"}}`, 400, -32600, "null"},
		{"request with a result", `{"jsonrpc":"2.0","id":7,"method":"tools/list","result":{}}`, 400, -32600, "7"},
		{"name of the wrong type", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":5,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, 400, -32602, "8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErrorID(t, sendRaw(t, c, tt.body), tt.status, tt.code, tt.id)
		})
	}

	t.Run("notifications", func(t *testing.T) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"hello"}}`,
		} {
			r := sendRaw(t, c, body)
			if r.Status != http.StatusAccepted || len(r.Body) != 0 {
				t.Errorf("%s: status %d body %q, want 202 and no body", body, r.Status, r.Body)
			}
		}
	})
}

// The Server is an http.Handler that serves the endpoint at every path
// it is given, and answers any method but POST (without a legacy session)
// with 405.
func TestServeHTTPAtAnyPath(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")
	c := newClientOpts(t, mcptest.HandlerAt("http://localhost/anything/here", s), nil)
	res := completeResult(t, sendTool(t, c, "hello", nil))
	if text, _ := toolText(t, res); text != "hi" {
		t.Errorf("text %q", text)
	}
	for _, method := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(method, "/mcp", nil))
		wantHTTPError(t, rec, http.StatusMethodNotAllowed, -32600)
	}
}

// hostClient returns a client of the live server at url that sends Host
// host ("" for the URL's) and Origin origin ("" for none).
func hostClient(t *testing.T, url, host, origin string) *mcptest.Client {
	t.Helper()
	h := http.Header{}
	if host != "" {
		h.Set("Host", host)
	}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return newClientOpts(t, mcptest.URL(url, nil), &mcptest.Options{Header: h})
}

func TestOriginAndHost(t *testing.T) {
	type check struct {
		host, origin string
		status       int
	}
	tests := []struct {
		name   string
		opts   Options
		checks func(addr string) []check
	}{
		{
			name: "defaults on a loopback listener",
			checks: func(addr string) []check {
				_, port, _ := strings.Cut(addr, ":")
				return []check{
					{"", "", 200},
					{"localhost:" + port, "", 200},
					{"localhost", "", 200},
					{"app.localhost", "", 200},
					{"[::1]:" + port, "", 200},
					{"127.0.0.2", "", 200},
					{"evil.example.com", "", 403},
					{"evil.example.com:" + port, "", 403},
					{"localhost.evil.example.com", "", 403},
					{"", "http://" + addr, 200},
					{"", "http://localhost:3000", 200},
					{"", "https://127.0.0.1", 200},
					{"", "http://[::1]:8080", 200},
					{"", "http://evil.example.com", 403},
					{"", "https://localhost.evil.example.com", 403},
					{"", "null", 403},
					{"", "not a url", 403},
				}
			},
		},
		{
			name: "AllowedHosts",
			opts: Options{AllowedHosts: []string{"mcp.example.com", "api.example.com:8443"}},
			checks: func(addr string) []check {
				return []check{
					{"mcp.example.com", "", 200},
					{"MCP.example.com:9000", "", 200},
					{"api.example.com:8443", "", 200},
					{"api.example.com:9000", "", 403},
					{"evil.example.com", "", 403},
					{"", "", 403}, // the loopback address is not listed
					{"mcp.example.com", "http://mcp.example.com", 200},
					{"mcp.example.com", "http://evil.example.com", 403},
				}
			},
		},
		{
			name: "AllowedOrigins",
			opts: Options{AllowedOrigins: []string{"https://app.example.com"}},
			checks: func(addr string) []check {
				return []check{
					{"", "https://app.example.com", 200},
					{"", "HTTPS://APP.EXAMPLE.COM", 200},
					{"", "http://app.example.com", 403},
					{"", "https://evil.example.com", 403},
					{"", "http://localhost:3000", 403}, // listing origins ends the loopback default
					{"", "http://" + addr, 403},
					{"", "", 200},
					{"evil.example.com", "https://app.example.com", 403}, // Host is still checked
				}
			},
		},
		{
			name: "AllowedOrigins star",
			opts: Options{AllowedOrigins: []string{"*"}},
			checks: func(addr string) []check {
				return []check{
					{"", "http://evil.example.com", 200},
					{"", "null", 200},
					{"evil.example.com", "http://evil.example.com", 403},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			s := newTestServer(t, &o)
			textTool(s, t, "hello", "hi")
			ts := httptest.NewServer(s)
			defer ts.Close()
			addr := ts.Listener.Addr().String()
			for _, c := range tt.checks(addr) {
				r := send(t, hostClient(t, ts.URL, c.host, c.origin), "tools/list", nil)
				if r.Status != c.status {
					t.Errorf("Host %q Origin %q: status %d, want %d (%s)", c.host, c.origin, r.Status, c.status, r.Body)
					continue
				}
				if c.status == 403 && (r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "Forbidden")) {
					t.Errorf("Host %q Origin %q: body %s", c.host, c.origin, r.Body)
				}
				if c.status == 200 && r.Error != nil {
					t.Errorf("Host %q Origin %q: error %s", c.host, c.origin, r.Body)
				}
			}
		})
	}

	t.Run("non-loopback context accepts any Host", func(t *testing.T) {
		// ServeHTTP without a local address (as behind some adapters): no
		// rebinding check, but foreign origins are still refused.
		s := newTestServer(t, nil)
		textTool(s, t, "hello", "hi")
		c := newClientOpts(t, mcptest.HandlerAt("http://example.com/mcp", s), nil)
		completeResult(t, send(t, c, "tools/list", nil))
		wantErrorID(t, send(t, c, "tools/list", nil, mcptest.WithHeader("Origin", "http://evil.example.com")), http.StatusForbidden, -32600, "null")
		completeResult(t, send(t, c, "tools/list", nil, mcptest.WithHeader("Origin", "http://example.com")))
	})
}
