package redisfleet_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/storetest"
)

func TestEventStore(t *testing.T) {
	rs := testredis.Start(t)
	storetest.Events(t, func(t *testing.T) legacy.EventStore {
		return redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions().(legacy.EventStore)
	})
}

func TestEventStoreOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	storetest.Events(t, func(t *testing.T) legacy.EventStore {
		return redisfleet.New(cc, redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions().(legacy.EventStore)
	})
}
