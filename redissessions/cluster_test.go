package redissessions_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/sessionstoretest"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redissessions"
)

// The store contract on a real three-master Redis Cluster.
func TestStoreOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	sessionstoretest.Run(t, func(t *testing.T) legacy.Store {
		return redissessions.New(cc, "test:"+t.Name()+":")
	})
}
