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
	"syscall"
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

	bin  string
	args []string
	log  *lockedBuffer
	mu   sync.Mutex
	cmd  *exec.Cmd // nil while killed
}

// Config changes how Start runs the server.
type Config struct {
	// AppendOnly turns the append-only file on (fsync at every write), so
	// that what was acknowledged survives Kill and Restart.
	AppendOnly bool
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
	return StartConfig(t, Config{})
}

// StartConfig is Start with a Config.
func StartConfig(t testing.TB, conf Config) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("redis-server not found: install Debian's package (apt-get update && apt-get install -y redis-server), or set BATON_REDIS_SERVER to its path")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	aof := "no"
	if conf.AppendOnly {
		aof = "yes"
	}
	s := &Server{Socket: sock, bin: bin, log: &lockedBuffer{}, args: []string{
		"--port", "0",
		"--unixsocket", sock,
		"--unixsocketperm", "700",
		"--save", "",
		"--appendonly", aof,
		"--appendfsync", "always",
		"--dir", dir,
		"--daemonize", "no",
	}}
	t.Cleanup(s.Kill)
	s.start(t)
	return s
}

// Kill stops the server with SIGKILL, as a crash would. Restart starts it
// again.
func (s *Server) Kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts a killed server again on the same socket and directory
// (with its append-only file, if Config.AppendOnly) and waits until it
// answers.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.start(t)
}

// Pause stops the server with SIGSTOP (it keeps its connections and
// answers nothing) until Resume.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a paused server.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// start runs the server and waits until it answers.
func (s *Server) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(s.bin, s.args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	log := s.log
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
