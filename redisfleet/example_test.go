package redisfleet_test

import (
	"context"
	"encoding/json"
	"log"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

// One Redis client and one prefix give a fleet every shared part: the
// fan-out, the task store, the 2025-11-25 session store and the ledger.
func Example() {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	f := redisfleet.New(rdb, redisfleet.Options{Prefix: "baton:"})
	srv, err := server.New(mcp.Implementation{Name: "fleet", Version: "1.0.0"}, &server.Options{
		Fanout: f.Fanout(),
		Tasks:  server.TaskOptions{Store: f.Tasks()},
		Legacy: legacy.New(&legacy.Options{Store: f.Sessions()}),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ledger := f.Ledger()
	err = srv.AddTool(server.Tool{Name: "delete_everything", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			// ... after the user confirmed:
			if err := req.Redeem(ctx, ledger); err != nil {
				return nil, err // replayed, or the ledger failed
			}
			return server.TextResult("done"), nil
		})
	if err != nil {
		log.Fatal(err)
	}
}
