package redisfleet_test

import (
	"testing"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/legacy/legacytest"
	"github.com/baton-mcp/baton/redisfleet"
)

func TestEventStore(t *testing.T) {
	rs := testredis.Start(t)
	legacytest.RunEvents(t, func(t *testing.T) legacy.EventStore {
		return redisfleet.New(rs.Client(t), redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions().(legacy.EventStore)
	})
}

func TestEventStoreOnCluster(t *testing.T) {
	rc := testredis.StartCluster(t)
	cc := rc.ClusterClient(t)
	legacytest.RunEvents(t, func(t *testing.T) legacy.EventStore {
		return redisfleet.New(cc, redisfleet.Options{Prefix: "test:" + t.Name() + ":"}).Sessions().(legacy.EventStore)
	})
}
