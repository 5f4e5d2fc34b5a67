package legacy

import (
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// TestAppendRequest checks that a server-to-client request is written
// byte for byte as encoding/json writes the same rpcwire.Request.
func TestAppendRequest(t *testing.T) {
	for _, c := range []struct {
		id     mcp.ID
		method string
		params json.RawMessage
	}{
		{mcp.IntID(7), "elicitation/create", json.RawMessage(`{"mode":"form","message":"Proceed?"}`)},
		{mcp.StringID("AbCdEfGhIjKlMnOp.12"), "sampling/createMessage", json.RawMessage(`{"messages":[]}`)},
		{mcp.IntID(1), "roots/list", nil},
		{mcp.IntID(2), "odd\"method\\é\n", json.RawMessage(`{}`)},
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

// TestAppendQuestion: an elicitation/create written with its question
// inside it (appendQuestion) is appendRequest's message of the question's
// params, and the outgoing's params are those params, not reached by an
// append to the message.
func TestAppendQuestion(t *testing.T) {
	q, err := elicit.NewForm(`Proceed <b>"now"</b>? é`, elicit.Boolean("confirm").Required(), elicit.String("name").MaxLength(500))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []mcp.ID{mcp.IntID(7), mcp.StringID("AbCdEfGhIjKlMnOp.12")} {
		for _, size := range []int{0, 16, 320} {
			o := outgoing{method: "elicitation/create", q: q, id: id}
			got := o.appendQuestion(make([]byte, 0, size))
			want, err := appendRequest(nil, id, o.method, q.AppendJSON(nil))
			if err != nil || string(got) != string(want) {
				t.Fatalf("appendQuestion %s (%v), want %s", got, err, want)
			}
			if string(o.params) != string(q.AppendJSON(nil)) || cap(o.params) != len(o.params) {
				t.Fatalf("params %s (cap %d), want the question's alone", o.params, cap(o.params))
			}
		}
	}
	if plainMethod("odd\"method") || plainMethod("é") || !plainMethod("elicitation/create") {
		t.Error("plainMethod is wrong")
	}
}
