package legacy_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

// An extension registered with Legacy is advertised in initialize and its
// methods are served in a 2025-11-25 session (to a client that declared
// it); one without Legacy is neither.
func TestExtensionsInLegacySessions(t *testing.T) {
	srv := newServer(t)
	addTool(t, srv, "echo", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("ok"), nil
	})
	ping := func(ctx context.Context, req *server.ExtensionRequest) (any, error) {
		var p struct {
			N int `json:"n"`
		}
		if err := req.DecodeParams(&p); err != nil {
			return nil, err
		}
		return map[string]any{"n": p.N + 1, "legacy": req.Legacy}, nil
	}
	if err := srv.AddExtension(server.Extension{ID: "com.example/both", Legacy: true, Settings: map[string]any{"v": 1},
		Methods: map[string]server.ExtensionMethod{"both/ping": {Handler: ping}}}); err != nil {
		t.Fatal(err)
	}
	if err := srv.AddExtension(server.Extension{ID: "com.example/modern",
		Methods: map[string]server.ExtensionMethod{"modern/ping": {Handler: ping}}}); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, srv)

	c := newClient(t, f)
	s := c.request(0, "initialize", initParams(legacyVersion, `{"extensions":{"com.example/both":{}}}`))
	if s.status != http.StatusOK {
		t.Fatalf("initialize: HTTP %d", s.status)
	}
	var init struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	if err := json.Unmarshal(s.result("0"), &init); err != nil {
		t.Fatal(err)
	}
	if len(init.Capabilities.Extensions) != 1 || string(init.Capabilities.Extensions["com.example/both"]) != `{"v":1}` {
		t.Errorf("initialize extensions = %v, want only com.example/both", init.Capabilities.Extensions)
	}

	c = connect(t, f, `{"extensions":{"com.example/both":{}}}`)
	res := decodeMap(t, c.call(1, "both/ping", map[string]any{"n": 41}))
	if res["n"] != float64(42) || res["legacy"] != true {
		t.Errorf("both/ping = %v", res)
	}
	if _, ok := res["resultType"]; ok {
		t.Error("a legacy result carries resultType")
	}
	if e := c.request(2, "modern/ping", map[string]any{}).rpcErr("2"); e == nil || e.Code != mcp.MethodNotFound {
		t.Errorf("modern/ping in a legacy session: %+v, want -32601", e)
	}
	undeclared := connect(t, f, `{}`)
	if e := undeclared.request(3, "both/ping", map[string]any{}).rpcErr("3"); e == nil || e.Code != mcp.MissingRequiredClientCapability {
		t.Errorf("both/ping without the extension: %+v, want -32021", e)
	}
}
