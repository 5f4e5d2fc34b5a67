package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

func TestCheckExtensionID(t *testing.T) {
	for _, id := range []string{
		"com.example/widgets", "com.example/w", "io.github.user-name/x_1.v2", "io.modelcontextprotocol/ui",
		"io.modelcontextprotocol/tasks", "com.example-co.sub/a-b",
	} {
		if err := checkExtensionID(id); err != nil {
			t.Errorf("checkExtensionID(%q) = %v, want nil", id, err)
		}
	}
	for id, why := range map[string]string{
		"":                                "prefix",
		"widgets":                         "prefix",
		"/widgets":                        "prefix",
		"example/widgets":                 "reverse-DNS",
		"com.example/":                    "name",
		"com.example/-w":                  "name",
		"com.example/w-":                  "name",
		"com.example/w/x":                 "name",
		"com.1example/w":                  "label",
		"com.example-/w":                  "label",
		"com..example/w":                  "label",
		"io.modelcontextprotocol/widgets": "reserved",
		"dev.mcp/widgets":                 "reserved",
		"io.ModelContextProtocol/ui2":     "reserved",
	} {
		err := checkExtensionID(id)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("checkExtensionID(%q) = %v, want an error about %s", id, err, why)
		}
	}
}

func okHandler(ctx context.Context, req *ExtensionRequest) (any, error) {
	return map[string]any{"ok": true}, nil
}

func TestAddExtensionChecks(t *testing.T) {
	s := newTestServer(t, nil)
	if err := s.AddExtension(Extension{ID: "com.example/a", Methods: map[string]ExtensionMethod{"example/do": {Handler: okHandler}}}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		ext  Extension
		want string
	}{
		"bad id":         {Extension{ID: "widgets"}, "prefix"},
		"reserved":       {Extension{ID: "io.modelcontextprotocol/mine"}, "reserved"},
		"twice":          {Extension{ID: "com.example/a"}, "already registered"},
		"tasks twice":    {Extension{ID: mcp.TasksExtension}, "already registered"},
		"settings array": {Extension{ID: "com.example/b", Settings: []string{"x"}}, "JSON object"},
		"settings bad":   {Extension{ID: "com.example/b", Settings: func() {}}, "encode settings"},
		"core method":    {Extension{ID: "com.example/b", Methods: map[string]ExtensionMethod{"tools/call": {Handler: okHandler}}}, "reserved"},
		"notify method":  {Extension{ID: "com.example/b", Methods: map[string]ExtensionMethod{"notifications/x": {Handler: okHandler}}}, "reserved"},
		"tasks method":   {Extension{ID: "com.example/b", Methods: map[string]ExtensionMethod{"tasks/get": {Handler: okHandler}}}, mcp.TasksExtension},
		"other's method": {Extension{ID: "com.example/b", Methods: map[string]ExtensionMethod{"example/do": {Handler: okHandler}}}, "com.example/a"},
		"no handler":     {Extension{ID: "com.example/b", Methods: map[string]ExtensionMethod{"example/x": {}}}, "no handler"},
		"bad notify":     {Extension{ID: "com.example/b", Notifications: []string{"example/changed"}}, "notifications/"},
	} {
		if err := s.AddExtension(tc.ext); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: AddExtension = %v, want an error about %q", name, err, tc.want)
		}
	}
	// A refused registration leaves nothing behind.
	if _, ok := s.modernCapabilities().Extensions["com.example/b"]; ok {
		t.Error("a refused extension is advertised")
	}
}

func TestExtensionAdvertised(t *testing.T) {
	s := newTestServer(t, nil)
	if err := s.AddExtension(Extension{ID: "com.example/modern", Settings: map[string]any{"level": 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddExtension(Extension{ID: "com.example/both", Legacy: true}); err != nil {
		t.Fatal(err)
	}
	res := wantResult(t, send(t, newClient(t, s, ""), "server/discover", map[string]any{}))
	caps, _ := res["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if got, _ := json.Marshal(ext); string(got) != `{"com.example/both":{},"com.example/modern":{"level":2}}` {
		t.Errorf("discover extensions = %s", got)
	}
	legacy := s.capabilities().Extensions
	if len(legacy) != 1 || string(legacy["com.example/both"]) != "{}" {
		t.Errorf("Capabilities().Extensions (initialize) = %v, want only com.example/both", legacy)
	}
}

// An extension method is served like a core method: envelope and header
// checks, middleware (with its target), and -32021 for a client that did
// not declare the extension.
func TestExtensionMethod(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mw := func(next MethodHandler) MethodHandler {
		return func(ctx context.Context, req *MethodRequest) (*MethodResult, error) {
			mu.Lock()
			seen = append(seen, req.Method+" "+req.Target+" "+req.Principal)
			mu.Unlock()
			if req.Target == "forbidden" {
				return nil, &mcp.Error{Code: -32001, Message: "not for you"}
			}
			return next(ctx, req)
		}
	}
	s := newTestServer(t, &Options{Middleware: []Middleware{mw}})
	h := http.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.ServeHTTP(w, r.WithContext(ContextWithPrincipal(r.Context(), "alice")))
	}))
	err := s.AddExtension(Extension{
		ID:            "com.example/widgets",
		Settings:      map[string]any{"max": 3},
		Notifications: []string{"notifications/widgets/progress"},
		Methods: map[string]ExtensionMethod{
			"widgets/spin": {NameParam: "widget", Handler: func(ctx context.Context, req *ExtensionRequest) (any, error) {
				var p struct {
					Widget string `json:"widget"`
					Turns  int    `json:"turns"`
				}
				if err := req.DecodeParams(&p); err != nil {
					return nil, err
				}
				if p.Turns < 0 {
					return nil, &mcp.Error{Code: mcp.InvalidParams, Message: "turns must not be negative"}
				}
				if p.Turns > 100 {
					return nil, errors.New("the spinner broke")
				}
				if err := req.Notify(ctx, "notifications/widgets/progress", map[string]any{"turned": p.Turns}); err != nil {
					return nil, err
				}
				if err := req.Notify(ctx, "notifications/undeclared", nil); err == nil {
					return nil, errors.New("an undeclared notification was sent")
				}
				return map[string]any{"widget": p.Widget, "turns": p.Turns, "by": req.Principal}, nil
			}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	declared := newClient(t, h, `{"extensions":{"com.example/widgets":{}}}`)
	spin := func(c *mcptest.Client, widget string, turns int, opts ...mcptest.CallOption) *mcptest.Response {
		return send(t, c, "widgets/spin", map[string]any{"widget": widget, "turns": turns}, append([]mcptest.CallOption{mcptest.WithHeader("Mcp-Name", widget)}, opts...)...)
	}

	r := spin(declared, "w1", 3)
	if r.Error != nil || r.Status != http.StatusOK {
		t.Fatalf("widgets/spin: %d %s", r.Status, r.Body)
	}
	res := decodeObject(t, r.Result) // on an event stream: it notified first
	if res["widget"] != "w1" || res["turns"] != float64(3) || res["by"] != "alice" || res["resultType"] != "complete" {
		t.Errorf("result = %v", res)
	}
	checkServerInfo(t, res)
	if len(r.Notifications) != 1 || r.Notifications[0].Method != "notifications/widgets/progress" || string(r.Notifications[0].Params) != `{"turned":3}` {
		t.Errorf("notifications = %+v, want one widgets/progress", r.Notifications)
	}

	// Not declared: -32021 naming the extension, the handler never runs.
	e := wantError(t, spin(newClient(t, h, ""), "w1", 3), http.StatusBadRequest, mcp.MissingRequiredClientCapability)
	if !strings.Contains(string(e.Data), "com.example/widgets") {
		t.Errorf("-32021 data = %s, want the extension named", e.Data)
	}
	// Middleware refuses by target.
	wantError(t, spin(declared, "forbidden", 1), http.StatusOK, -32001)
	// Mcp-Name must match the NameParam.
	wantError(t, spin(declared, "w1", 1, mcptest.WithHeader("Mcp-Name", "w2")), http.StatusBadRequest, mcp.HeaderMismatch)
	// Handler errors: a JSON-RPC error as it is, anything else hidden.
	wantError(t, spin(declared, "w1", -1), http.StatusBadRequest, mcp.InvalidParams)
	e = wantError(t, spin(declared, "w1", 101), http.StatusOK, mcp.InternalError)
	if strings.Contains(e.Message, "spinner") {
		t.Errorf("internal error leaks its cause: %q", e.Message)
	}
	// Params are decoded strictly: "Turns" does not fill turns (which
	// would break the spinner).
	body := `{"jsonrpc":"2.0","id":9,"method":"widgets/spin","params":{"widget":"w1","turns":1,"Turns":200,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion + `","io.modelcontextprotocol/clientCapabilities":{"extensions":{"com.example/widgets":{}}}}}}`
	dr, err := declared.DoRaw(testContext(t), []byte(body), mcptest.WithHeader("Mcp-Method", "widgets/spin"), mcptest.WithHeader("Mcp-Name", "w1"))
	if err != nil {
		t.Fatal(err)
	}
	if dr.Error != nil || !strings.Contains(string(dr.Body), `"turns":1`) {
		t.Errorf("a key differing in case filled a field: %s", dr.Body)
	}
	// An unknown method is still -32601.
	wantError(t, send(t, declared, "widgets/unknown", map[string]any{}), http.StatusNotFound, mcp.MethodNotFound)

	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || seen[0] != "widgets/spin w1 alice" {
		t.Errorf("middleware saw %q, want the method, its target and the principal first", seen)
	}
}

// The body limits and the envelope checks apply to extension methods
// before their handler runs.
func TestExtensionMethodLimits(t *testing.T) {
	s := newTestServer(t, &Options{MaxRequestBytes: 1024, MaxJSONDepth: 8})
	ran := 0
	if err := s.AddExtension(Extension{ID: "com.example/w", Methods: map[string]ExtensionMethod{"w/do": {Handler: func(ctx context.Context, req *ExtensionRequest) (any, error) {
		ran++
		return nil, nil
	}}}}); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, `{"extensions":{"com.example/w":{}}}`)
	wantResult(t, send(t, c, "w/do", map[string]any{}))
	wantErrorID(t, send(t, c, "w/do", map[string]any{"pad": strings.Repeat("x", 1100)}), http.StatusRequestEntityTooLarge, -32600, "null")
	deep := strings.Repeat("[", 9) + strings.Repeat("]", 9)
	wantErrorID(t, sendRaw(t, c, `{"jsonrpc":"2.0","id":2,"method":"w/do","params":{"x":`+deep+`}}`), http.StatusBadRequest, -32700, "null")
	wantError(t, sendRaw(t, c, `{"jsonrpc":"2.0","id":3,"method":"w/do","params":{}}`), http.StatusBadRequest, mcp.InvalidParams)
	if ran != 1 {
		t.Errorf("the handler ran %d times, want once (for the valid request)", ran)
	}
}

// BenchmarkExtensionMethod serves an extension method (params decoded by
// the handler, a small object result) through ServeHTTP, for comparison
// with BenchmarkToolsCall.
func BenchmarkExtensionMethod(b *testing.B) {
	s := newTestServer(b, nil)
	if err := s.AddExtension(Extension{ID: "com.example/echo", Methods: map[string]ExtensionMethod{"echo/say": {NameParam: "text", Handler: func(ctx context.Context, req *ExtensionRequest) (any, error) {
		var p struct {
			Text string `json:"text"`
		}
		if err := req.DecodeParams(&p); err != nil {
			return nil, err
		}
		return map[string]string{"text": p.Text}, nil
	}}}}); err != nil {
		b.Fatal(err)
	}
	req := wireOf(b, s, `{"extensions":{"com.example/echo":{}}}`, func(c *mcptest.Client) {
		send(b, c, "echo/say", map[string]any{"text": "hello"}, mcptest.WithHeader("Mcp-Name", "hello"))
	})
	want := []byte(`"text":"hello"`)
	b.ReportAllocs()
	for b.Loop() {
		rec := req.serve(s, nil)
		if rec.Code != http.StatusOK || !bytes.Contains(rec.Body.Bytes(), want) {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
