package legacy

import (
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/jsonrpc"
)

// TestAppendRequest checks that a server-to-client request is written
// byte for byte as encoding/json writes the same rpcwire.Request.
func TestAppendRequest(t *testing.T) {
	for _, c := range []struct {
		id     jsonrpc.ID
		method string
		params json.RawMessage
	}{
		{jsonrpc.IntID(7), "elicitation/create", json.RawMessage(`{"mode":"form","message":"Proceed?"}`)},
		{jsonrpc.StringID("AbCdEfGhIjKlMnOp.12"), "sampling/createMessage", json.RawMessage(`{"messages":[]}`)},
		{jsonrpc.IntID(1), "roots/list", nil},
		{jsonrpc.IntID(2), "odd\"method\\é\n", json.RawMessage(`{}`)},
	} {
		req := rpcwire.Request{JSONRPC: rpcwire.Version, ID: c.id, Method: c.method, Params: json.RawMessage("{}")}
		if len(c.params) > 0 {
			req.Params = c.params
		}
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRequest(nil, c.id, c.method, c.params)
		if err != nil || string(got) != string(want) {
			t.Errorf("%s: got %s (%v), want %s", c.method, got, err, want)
		}
	}
}
