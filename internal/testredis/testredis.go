// Package testredis starts a real, private Redis server for a test: Debian's
// redis-server, listening only on a Unix socket in the test's temporary
// directory, with no persistence. Tests that need Redis call Start; when
// the binary is missing they are skipped with a message saying how to get
// it (.ci/run installs it, so CI never skips).
package testredis

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Binary returns the path of redis-server, or "" when it is not installed.
func Binary() string {
	if p := os.Getenv("BATON_REDIS_SERVER"); p != "" {
		return p
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	for _, p := range []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// Server is a running redis-server.
type Server struct {
	// Socket is the Unix socket path.
	Socket string
}

// Options returns client options for the server.
func (s *Server) Options() *redis.Options {
	return &redis.Options{Network: "unix", Addr: s.Socket}
}

// Client returns a new client for the server, closed when the test ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(s.Options())
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Start runs a redis-server for the test and stops it when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("redis-server not found: install Debian's package (apt-get update && apt-get install -y redis-server), or set BATON_REDIS_SERVER to its path")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin,
		"--port", "0",
		"--unixsocket", sock,
		"--unixsocketperm", "700",
		"--save", "",
		"--appendonly", "no",
		"--dir", dir,
		"--daemonize", "no",
	)
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	s := &Server{Socket: sock}
	c := redis.NewClient(s.Options())
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server does not answer: %v\n%s", err, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return s
}

// lockedBuffer collects the server's output for error messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
