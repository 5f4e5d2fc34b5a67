package redisfleet_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
	"github.com/baton-mcp/baton/storetest"
)

func TestTaskStore(t *testing.T) {
	rs := testredis.Start(t)
	storetest.Tasks(t, func(t *testing.T) server.TaskStore {
		return redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Tasks()
	})
}
