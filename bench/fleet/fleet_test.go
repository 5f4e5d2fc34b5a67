package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain serves an instance when the driver started this test binary as
// one.
func TestMain(m *testing.M) {
	if sock := os.Getenv(instanceEnv); sock != "" {
		if err := serveInstance(sock); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A short run of every scenario on every setup: no operation fails, and
// each table is printed with the fleet's Redis round trips.
func TestFleetRun(t *testing.T) {
	if binary("BATON_NGINX", "/usr/sbin/nginx", "/usr/local/sbin/nginx") == "" {
		t.Skip("nginx not found: apt-get install nginx (or set BATON_NGINX)")
	}
	if binary("BATON_REDIS_SERVER", "/usr/bin/redis-server", "/usr/local/bin/redis-server") == "" {
		t.Skip("redis-server not found: apt-get install redis-server (or set BATON_REDIS_SERVER)")
	}
	var out bytes.Buffer
	ok, err := run(config{duration: 300 * time.Millisecond, warmup: 100 * time.Millisecond, reps: 1, concurrency: 2,
		scenarios: []string{"flow", "crossing", "task"}}, &out)
	t.Log(out.String())
	if err != nil || !ok {
		t.Fatalf("run: ok %v, %v", ok, err)
	}
	for _, want := range []string{"### flow", "### crossing", "### task", "| 3 instances + nginx + Redis |", "| 1 instance (memory) + nginx |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the output has no %q", want)
		}
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(l, "| 3 instances") && strings.Contains(l, "| – |") {
			t.Errorf("a fleet row without Redis figures: %s", l)
		}
	}
}
