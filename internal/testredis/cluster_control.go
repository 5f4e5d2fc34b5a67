package testredis

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// clusterNode is one redis-server process of a Cluster.
type clusterNode struct {
	addr string
	bin  string
	args []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedBuffer
}

func (n *clusterNode) start() error {
	cmd := exec.Command(n.bin, n.args...)
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start redis-server on %s: %w", n.addr, err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	n.mu.Lock()
	n.cmd, n.done, n.log = cmd, done, log
	n.mu.Unlock()
	return nil
}

func (n *clusterNode) kill() {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGCONT)
	_ = cmd.Process.Kill()
	<-done
}

// Kill ends master i at once (SIGKILL), as a crash would, and waits until
// it is gone. Without a replica to take over, the cluster refuses
// commands for its slots, and once the others mark it failed (after the
// node timeout, 2 s), every command (cluster_state:fail).
func (c *Cluster) Kill(i int) { c.nodes[i].kill() }

// Restart starts master i again on its port and directory (its
// nodes.conf makes it the same node; with Config.AppendOnly its data is
// back) and waits until every node says cluster_state:ok again.
func (c *Cluster) Restart(t testing.TB, i int) {
	t.Helper()
	n := c.nodes[i]
	n.kill()
	if err := n.start(); err != nil {
		t.Fatal(err)
	}
	waitPing(t, n.addr, n.log)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, addr := range c.Addrs {
		rc := redis.NewClient(&redis.Options{Addr: addr})
		for {
			info, err := rc.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if ctx.Err() != nil {
				_ = rc.Close()
				t.Fatalf("Redis Cluster node %s not ok after restarting %s: %v\n%s", addr, n.addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = rc.Close()
	}
}

// Pause stops master i (SIGSTOP): its connections stay open and its
// commands go unanswered until Resume. After the node timeout (2 s) the
// other masters mark it failed and the cluster refuses every command.
func (c *Cluster) Pause(i int) { c.nodes[i].signal(syscall.SIGSTOP) }

// Resume continues master i after Pause (SIGCONT).
func (c *Cluster) Resume(i int) { c.nodes[i].signal(syscall.SIGCONT) }

func (n *clusterNode) signal(sig syscall.Signal) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.cmd != nil {
		_ = n.cmd.Process.Signal(sig)
	}
}
