//go:build linux

package fleet_test

import (
	"context"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
)

// killRedis kills the fleet's Redis, or on a cluster its first master.
func (f *fleet) killRedis() {
	if f.cluster != nil {
		f.cluster.Kill(0)
		return
	}
	f.redis.Kill()
}

// restartRedis starts what killRedis killed, with its append-only file.
func (f *fleet) restartRedis(t *testing.T) {
	if f.cluster != nil {
		f.cluster.Restart(t, 0)
		return
	}
	f.redis.Restart(t)
}

// redisName names what killRedis kills.
func (f *fleet) redisName() string {
	if f.cluster != nil {
		return "one master of the three-master Redis Cluster"
	}
	return "Redis"
}

// TestFleetFaultsCluster runs the row "Redis killed as tasks finish" on a
// fleet whose instances share a real three-master Redis Cluster
// (BATON_REDIS_CLUSTER; each node with its append-only file): one master
// is killed for 5 s and restarted. Without a replica to take over, the
// cluster refuses every command once the other masters mark it failed;
// the tasks finishing meanwhile keep their results, none fails, and the
// requests that needed the store get the 503 naming it.
func TestFleetFaultsCluster(t *testing.T) {
	nginxBin := requireNginx(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	began := time.Now()
	f := &fleet{t: t, dir: t.TempDir(), cluster: testredis.StartClusterWith(t, testredis.Config{AppendOnly: true})}
	f.launch(nginxBin, keyOne, "")
	t.Logf("fleet on a Redis Cluster (%v) up in %v", f.cluster.Addrs, time.Since(began).Round(time.Millisecond))
	t.Run("redis cluster master killed as tasks finish", func(t *testing.T) {
		testRedisKilled(t, ctx, f, []time.Duration{5 * time.Second})
	})
	t.Logf("cluster rows done in %v", time.Since(began).Round(time.Second))
}
