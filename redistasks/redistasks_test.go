package redistasks_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redistasks"
	"github.com/baton-mcp/baton/tasks"
	"github.com/baton-mcp/baton/tasks/taskstest"
)

func TestStore(t *testing.T) {
	rs := testredis.Start(t)
	taskstest.Run(t, func(t *testing.T) tasks.Store {
		return redistasks.New(rs.Client(t), "test:"+t.Name()+":")
	})
}
