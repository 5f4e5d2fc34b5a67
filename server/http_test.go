package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
)

func TestRouting(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")

	t.Run("unknown method", func(t *testing.T) {
		e := wantErrorRec(t, do(t, s, call(1, "tools/frobnicate", nil)), http.StatusNotFound, -32601, "1")
		if !strings.Contains(e.Message, "tools/frobnicate") {
			t.Errorf("message %q does not name the method", e.Message)
		}
	})
	for _, m := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "tasks/get"} {
		t.Run("removed "+m, func(t *testing.T) {
			req := call("r", m, map[string]any{"protocolVersion": testVersion, "capabilities": map[string]any{}})
			wantErrorRec(t, do(t, s, req), http.StatusNotFound, -32601, `"r"`)
		})
	}
	t.Run("legacy initialize", func(t *testing.T) {
		req := call(0, "initialize", map[string]any{
			"protocolVersion": "2025-11-25",
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": "old", "version": "1"},
		}).withoutMeta().without(HeaderProtocolVersion).without(HeaderMethod)
		e := wantErrorRec(t, do(t, s, req), http.StatusBadRequest, -32022, "0")
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

	for _, m := range []string{http.MethodGet, http.MethodDelete, http.MethodPut} {
		t.Run(m, func(t *testing.T) {
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(m, "/mcp", nil)
			r.Header.Set("Accept", "text/event-stream")
			r.Header.Set(HeaderSessionID, "abc")
			s.ServeHTTP(rec, r)
			wantErrorRec(t, rec, http.StatusMethodNotAllowed, -32600, "null")
			if a := rec.Header().Get("Allow"); a != http.MethodPost {
				t.Errorf("Allow = %q, want POST", a)
			}
			if rec.Header().Get(HeaderSessionID) != "" {
				t.Error("a session id was minted")
			}
		})
	}

	t.Run("Content-Type", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/json-seq", "garbage/"} {
			rec := do(t, s, call(1, "tools/list", nil).header("Content-Type", ct))
			wantErrorRec(t, rec, http.StatusUnsupportedMediaType, -32600, "null")
		}
		for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
			completeResultRec(t, do(t, s, call(1, "tools/list", nil).header("Content-Type", ct)), "1")
		}
		completeResultRec(t, do(t, s, call(1, "tools/list", nil).without("Content-Type")), "1")
	})

	t.Run("no Mcp-Session-Id minted on success", func(t *testing.T) {
		rec := do(t, s, call(1, "tools/list", nil).header(HeaderSessionID, "stale"))
		completeResultRec(t, rec, "1")
		if rec.Header().Get(HeaderSessionID) != "" {
			t.Error("a session id was set")
		}
	})
}

func TestBodyLimits(t *testing.T) {
	s := newTestServer(t, &Options{MaxRequestBytes: 512, MaxJSONDepth: 8})
	textTool(s, t, "hello", "hi")

	t.Run("too large", func(t *testing.T) {
		req := toolCall(1, "hello", map[string]any{"pad": strings.Repeat("x", 600)})
		e := wantErrorRec(t, do(t, s, req), http.StatusRequestEntityTooLarge, -32600, "null")
		if !strings.Contains(e.Message, "512-byte limit") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("at the limit", func(t *testing.T) {
		req := toolCall(1, "hello", nil)
		n := len(req.encode(t))
		req = toolCall(1, "hello", map[string]any{"pad": ""})
		pad := 512 - len(req.encode(t))
		if pad < 0 || n > 512 {
			t.Fatal("base request too large")
		}
		req = toolCall(1, "hello", map[string]any{"pad": strings.Repeat("x", pad)})
		if got := len(req.encode(t)); got != 512 {
			t.Fatalf("body is %d bytes", got)
		}
		completeResultRec(t, do(t, s, req), "1")
	})
	t.Run("too deep", func(t *testing.T) {
		deep := strings.Repeat("[", 9) + strings.Repeat("]", 9)
		req := call(2, "tools/list", nil).body(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"x":` + deep + `}}`)
		e := wantErrorRec(t, do(t, s, req), http.StatusBadRequest, -32700, "null")
		if !strings.Contains(e.Message, "nesting") {
			t.Errorf("message %q", e.Message)
		}
	})
	t.Run("deep inside a string is fine", func(t *testing.T) {
		req := toolCall(3, "hello", map[string]any{"s": strings.Repeat("[{", 40)})
		completeResultRec(t, do(t, s, req), "3")
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
	for _, tc := range []struct {
		name string
		req  *rpc
		msg  string // "" when within the limits
	}{
		{"members at the limit", toolCall(1, "hello", keys(5)), ""},
		{"members over the limit", toolCall(1, "hello", keys(6)), "more than 5 members"},
		{"inputResponses over the limit", toolCall(1, "hello", nil).retry("", keys(6)), "more than 5 members"},
		{"number at the limit", toolCall(1, "hello", json.RawMessage(`{"n":-1.234e+20}`)), ""},
		{"number over the limit", toolCall(1, "hello", json.RawMessage(`{"n":-1.2345e+20}`)), "11 bytes long, over the limit of 10"},
		{"exponent over the limit", toolCall(1, "hello", json.RawMessage(`{"n":1e-21}`)), "beyond ±20"},
		{"in strings they do not count", toolCall(1, "hello", map[string]any{"s": `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":1e999999}`}), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := do(t, s, tc.req)
			if tc.msg == "" {
				completeResultRec(t, rec, "1")
				return
			}
			e := wantErrorRec(t, rec, http.StatusBadRequest, -32602, "null")
			if !strings.Contains(e.Message, tc.msg) {
				t.Errorf("message %q, want %q", e.Message, tc.msg)
			}
		})
	}
	t.Run("defaults", func(t *testing.T) {
		d := newTestServer(t, nil)
		textTool(d, t, "hello", "hi")
		completeResultRec(t, do(t, d, toolCall(1, "hello", keys(10000))), "1")
		for req, msg := range map[*rpc]string{
			toolCall(1, "hello", keys(10001)):                                                  "more than 10000 members",
			toolCall(1, "hello", json.RawMessage(`{"n":1e401}`)):                               "beyond ±400",
			toolCall(1, "hello", json.RawMessage(`{"n":`+strings.Repeat("1", 101)+`}`)):        "over the limit of 100",
			toolCall(1, "hello", json.RawMessage(`{"n":1e-999999}`)).retry("garbage", keys(1)): "beyond ±400",
		} {
			e := wantErrorRec(t, do(t, d, req), http.StatusBadRequest, -32602, "null")
			if !strings.Contains(e.Message, msg) {
				t.Errorf("message %q, want %q", e.Message, msg)
			}
		}
	})
}

func TestMalformedMessages(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")
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
			wantErrorRec(t, do(t, s, call(0, "tools/list", nil).body(tt.body)), tt.status, tt.code, tt.id)
		})
	}

	t.Run("notifications", func(t *testing.T) {
		for _, body := range []string{
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
			`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"hello"}}`,
		} {
			rec := do(t, s, call(nil, "notifications/x", nil).body(body))
			if rec.Code != http.StatusAccepted || rec.Body.Len() != 0 {
				t.Errorf("%s: status %d body %q, want 202 and no body", body, rec.Code, rec.Body)
			}
		}
	})
}

func TestHandlerAndMount(t *testing.T) {
	s := newTestServer(t, nil)
	textTool(s, t, "hello", "hi")

	t.Run("Handler serves every path", func(t *testing.T) {
		h := s.Handler()
		r := toolCall(1, "hello", nil).httpRequest(t)
		r.URL.Path = "/anything/here"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		res := completeResultRec(t, rec, "1")
		if text, _ := toolText(t, res); text != "hi" {
			t.Errorf("text %q", text)
		}
	})
	t.Run("Mount with middleware", func(t *testing.T) {
		e := echo.New()
		var saw string
		s.Mount(e, "/mcp", func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				saw = c.Request().Header.Get(HeaderMethod)
				return next(c)
			}
		})
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, call(1, "tools/list", nil).httpRequest(t))
		completeResultRec(t, rec, "1")
		if saw != "tools/list" {
			t.Errorf("middleware saw %q", saw)
		}
		rec = httptest.NewRecorder()
		e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/mcp", nil))
		wantErrorRec(t, rec, http.StatusMethodNotAllowed, -32600, "null")
	})
}

// rawPost sends a tools/list to a live server with the given Host and
// Origin ("" leaves them default) and returns the status and body.
func rawPost(t *testing.T, url, host, origin string) (int, []byte) {
	t.Helper()
	c := call(1, "tools/list", nil)
	r, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(c.encode(t))))
	if err != nil {
		t.Fatal(err)
	}
	c.applyHeaders(r.Header)
	if host != "" {
		r.Host = host
	}
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
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
				status, body := rawPost(t, ts.URL, c.host, c.origin)
				if status != c.status {
					t.Errorf("Host %q Origin %q: status %d, want %d (%s)", c.host, c.origin, status, c.status, body)
					continue
				}
				r := parseResponse(t, body)
				if c.status == 403 && (r.Error == nil || r.Error.Code != -32600 || !strings.Contains(r.Error.Message, "Forbidden")) {
					t.Errorf("Host %q Origin %q: body %s", c.host, c.origin, body)
				}
				if c.status == 200 && r.Error != nil {
					t.Errorf("Host %q Origin %q: error %s", c.host, c.origin, body)
				}
			}
		})
	}

	t.Run("non-loopback context accepts any Host", func(t *testing.T) {
		// ServeHTTP without a local address (as behind some adapters): no
		// rebinding check, but foreign origins are still refused.
		s := newTestServer(t, nil)
		textTool(s, t, "hello", "hi")
		completeResultRec(t, do(t, s, call(1, "tools/list", nil)), "1")
		wantErrorRec(t, do(t, s, call(1, "tools/list", nil).header("Origin", "http://evil.example.com")), http.StatusForbidden, -32600, "null")
		completeResultRec(t, do(t, s, call(1, "tools/list", nil).header("Origin", "http://example.com")), "1")
	})
}
