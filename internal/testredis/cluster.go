package testredis

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a running three-master Redis Cluster on loopback.
type Cluster struct {
	// Addrs are the masters' addresses (127.0.0.1:PORT).
	Addrs []string

	nodes []*clusterNode // by index in Addrs (cluster_control.go)
}

// ClusterClient returns a new cluster client, closed when the test ends.
func (c *Cluster) ClusterClient(t testing.TB) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// freeClusterPort returns a loopback port that is free, and whose cluster
// bus port (the port + 10000) is free too.
func freeClusterPort(t testing.TB, taken map[int]bool) int {
	t.Helper()
	for range 200 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		_ = ln.Close()
		if port+10000 > 65535 || taken[port] || taken[port+10000] {
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000))
		if err != nil {
			continue
		}
		_ = bus.Close()
		taken[port], taken[port+10000] = true, true
		return port
	}
	t.Fatal("no free port pair for a Redis Cluster node")
	return 0
}

// StartCluster runs three redis-server processes in cluster mode on
// loopback, gives each a third of the 16384 slots and joins them
// (CLUSTER ADDSLOTSRANGE and CLUSTER MEET, by hand: no redis-cli needed),
// waits until every node says cluster_state:ok, and stops them when the
// test ends. Without redis-server the test is skipped, saying how to get
// it.
func StartCluster(t testing.TB) *Cluster { return StartClusterWith(t, Config{}) }

// StartClusterWith is StartCluster with the nodes configured by c: with
// c.AppendOnly each node keeps an append-only file, so that a node killed
// and restarted (Kill, Restart) comes back with what was written to it.
func StartClusterWith(t testing.TB, c0 Config) *Cluster {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("redis-server not found: install Debian's package (apt-get update && apt-get install -y redis-server), or set BATON_REDIS_SERVER to its path")
	}
	taken := map[int]bool{}
	c := &Cluster{}
	for i := range 3 {
		port := freeClusterPort(t, taken)
		dir := t.TempDir()
		addr := "127.0.0.1:" + strconv.Itoa(port)
		aof := []string{"--appendonly", "no"}
		if c0.AppendOnly {
			aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
		}
		args := append([]string{
			"--bind", "127.0.0.1",
			"--port", strconv.Itoa(port),
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000",
			"--save", "",
			"--dir", dir,
			"--daemonize", "no",
		}, aof...)
		n := &clusterNode{addr: addr, bin: bin, args: args}
		if err := n.start(); err != nil {
			t.Fatalf("start redis-server %d: %v", i, err)
		}
		t.Cleanup(n.kill)
		c.Addrs = append(c.Addrs, addr)
		c.nodes = append(c.nodes, n)
		waitPing(t, addr, n.log)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	per := 16384 / len(c.Addrs)
	for i, addr := range c.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		first, last := i*per, (i+1)*per-1
		if i == len(c.Addrs)-1 {
			last = 16383
		}
		if err := n.ClusterAddSlotsRange(ctx, first, last).Err(); err != nil {
			t.Fatalf("CLUSTER ADDSLOTSRANGE on %s: %v", addr, err)
		}
		if i > 0 {
			host, port, _ := net.SplitHostPort(addr)
			first := redis.NewClient(&redis.Options{Addr: c.Addrs[0]})
			err := first.ClusterMeet(ctx, host, port).Err()
			_ = first.Close()
			if err != nil {
				t.Fatalf("CLUSTER MEET %s: %v", addr, err)
			}
		}
		_ = n.Close()
	}
	for _, addr := range c.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		for {
			info, err := n.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_known_nodes:3") {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("Redis Cluster node %s not ready: %v\n%s", addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = n.Close()
	}
	// Every node must know every other's slots before a client routes.
	cc := c.ClusterClient(t)
	for {
		err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			slots, err := n.ClusterSlots(ctx).Result()
			if err != nil {
				return err
			}
			if len(slots) != 3 {
				return fmt.Errorf("%d slot ranges known", len(slots))
			}
			return nil
		})
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("Redis Cluster slots not known everywhere: %v", err)
		}
		cc.ReloadState(ctx)
		time.Sleep(50 * time.Millisecond)
	}
	return c
}

// waitPing waits until the server at addr answers.
func waitPing(t testing.TB, addr string, log *lockedBuffer) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on %s does not answer: %v\n%s", addr, err, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
