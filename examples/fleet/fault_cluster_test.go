//go:build linux

package fleet_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// pauseRedis stops the fleet's Redis (SIGSTOP), or on a cluster its first
// master; resumeRedis continues it.
func (f *fleet) pauseRedis() {
	if f.cluster != nil {
		f.cluster.Pause(0)
		return
	}
	f.redis.Pause()
}

func (f *fleet) resumeRedis() {
	if f.cluster != nil {
		f.cluster.Resume(0)
		return
	}
	f.redis.Resume()
}

// redisKeys lists the keys matching pattern in the fleet's Redis, or in
// every master of its cluster.
func (f *fleet) redisKeys(ctx context.Context, t *testing.T, pattern string) ([]string, error) {
	if f.cluster == nil {
		return f.redis.Client(t).Keys(ctx, pattern).Result()
	}
	var (
		mu  sync.Mutex
		out []string
	)
	err := f.cluster.ClusterClient(t).ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error {
		keys, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		out = append(out, keys...)
		mu.Unlock()
		return err
	})
	return out, err
}

// redisName names what killRedis kills.
func (f *fleet) redisName() string {
	if f.cluster != nil {
		return "one master of the three-master Redis Cluster"
	}
	return "Redis"
}

// TestFleetFaultsCluster runs the rows "Redis killed as tasks finish" and
// "Redis paused" on a
// fleet whose instances share a real three-master Redis Cluster
// (BATON_REDIS_CLUSTER; each node with its append-only file): one master
// is killed for 5 s and restarted. Without a replica to take over, the
// cluster refuses every command once the other masters mark it failed;
// the tasks finishing meanwhile keep their results, none fails, and the
// requests that needed the store get the 503 naming it. Then one master is
// paused (SIGSTOP) for 10 s: no request waits past the bound.
func TestFleetFaultsCluster(t *testing.T) {
	nginxBin := requireNginx(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	began := time.Now()
	f := &fleet{t: t, dir: t.TempDir(), cluster: testredis.StartClusterWith(t, testredis.Config{AppendOnly: true})}
	f.launch(nginxBin, keyOne, "")
	t.Logf("fleet on a Redis Cluster (%v) up in %v", f.cluster.Addrs, time.Since(began).Round(time.Millisecond))
	t.Run("redis cluster master killed as tasks finish", func(t *testing.T) {
		testRedisKilled(t, ctx, f, []time.Duration{5 * time.Second})
	})
	t.Run("redis cluster master paused", func(t *testing.T) {
		testRedisPaused(t, ctx, f)
	})
	t.Logf("cluster rows done in %v", time.Since(began).Round(time.Second))
}
