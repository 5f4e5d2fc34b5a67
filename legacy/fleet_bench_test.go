package legacy_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// BenchmarkBlockingRoundTrip measures one blocking call of a 2025-11-25
// session over HTTP on loopback: tools/call, the server's elicitation on
// the call's stream, the client's answer in a POST of its own, the result.
// "one instance" is the default (the answer reaches the call in process);
// the others run two instances sharing a store, the call on one and the
// answer POSTed to the other, which forwards it through the store's
// messages. Compare the three within one run:
//
//	go test -run '^$' -bench BlockingRoundTrip -benchtime 300x ./legacy/
func BenchmarkBlockingRoundTrip(b *testing.B) {
	register := func(srv *server.Server) {
		schema := nameSchema(b)
		addTool(b, srv, "ask", func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			r, err := req.CreateFormElicitation(ctx, "Name?", schema)
			if err != nil {
				return nil, err
			}
			return server.TextResult(string(r.Action)), nil
		})
	}
	run := func(b *testing.B, call, answer *fixture) {
		c := connect(b, call, `{"elicitation":{}}`)
		b.ResetTimer()
		for i := range b.N {
			s := c.on(call).request(i, "tools/call", toolCall("ask", nil))
			req := s.nextRequest("elicitation/create")
			c.on(answer).answer(req, map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}})
			s.result(fmt.Sprint(i))
			s.close()
		}
	}
	b.Run("one instance", func(b *testing.B) {
		srv := newServer(b)
		register(srv)
		f := newFixture(b, srv)
		run(b, f, f)
	})
	b.Run("two instances, memory store", func(b *testing.B) {
		ti := newTwoInstances(b, legacy.NewMemoryStore(nil), legacy.Options{}, register)
		run(b, ti.a, ti.b)
	})
	b.Run("two instances, redis store", func(b *testing.B) {
		rs := testredis.Start(b)
		ti := newTwoInstances(b, redisfleet.New(rs.Client(b), redisfleet.Options{Prefix: "bench:"}).Sessions(), legacy.Options{}, register)
		run(b, ti.a, ti.b)
	})
}
