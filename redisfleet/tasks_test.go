package redisfleet_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/tasks"
	"github.com/baton-mcp/baton/tasks/taskstest"
)

func TestTaskStore(t *testing.T) {
	rs := testredis.Start(t)
	taskstest.Run(t, func(t *testing.T) tasks.Store {
		return redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Tasks()
	})
}
