package mcptest_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/baton-mcp/baton/mcptest"
)

// BenchmarkCallTool measures one two-question flow (three requests) in
// process and over loopback HTTP, so the cost of the socket can be read
// as a ratio within one run.
func BenchmarkCallTool(b *testing.B) {
	srv := newServer(b, sharedKey)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	for _, tc := range []struct {
		name   string
		target mcptest.Target
	}{
		{"in-process", mcptest.Handler(srv)},
		{"http", mcptest.URL(ts.URL, ts.Client())},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c := newClient(b, tc.target, &mcptest.Options{Elicitation: user})
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				res, err := c.CallTool(ctx, "ask_two", nil)
				if err != nil || res.Text() != "Alice likes green" {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}
