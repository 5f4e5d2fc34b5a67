// Package testredis starts a real, private Redis server for a test: Debian's
// redis-server, listening only on a Unix socket in the test's temporary
// directory, with no persistence. Tests that need Redis call Start; when
// the binary is missing they are skipped with a message saying how to get
// it (.ci/run installs it, so CI never skips).
package testredis

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

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
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedBuffer
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
// It keeps nothing on disk (StartWith can).
func Start(t testing.TB) *Server { return StartWith(t, Config{}) }

// Config configures StartWith.
type Config struct {
	// AppendOnly turns on the append-only file (appendonly yes,
	// appendfsync always), so that what was written survives Restart.
	AppendOnly bool
}

// StartWith runs a redis-server configured by c for the test and stops it
// when the test ends.
func StartWith(t testing.TB, c Config) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("redis-server not found: install Debian's package (apt-get update && apt-get install -y redis-server), or set BATON_REDIS_SERVER to its path")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	aof := []string{"--appendonly", "no"}
	if c.AppendOnly {
		aof = []string{"--appendonly", "yes", "--appendfsync", "always"}
	}
	s := &Server{Socket: sock, bin: bin, args: append([]string{
		"--port", "0",
		"--unixsocket", sock,
		"--unixsocketperm", "700",
		"--save", "",
		"--dir", dir,
		"--daemonize", "no",
	}, aof...)}
	t.Cleanup(s.Kill)
	if err := s.start(); err != nil {
		t.Fatal(err)
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
