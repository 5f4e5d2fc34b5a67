// Command fleet measures Baton's fleet paths through nginx with Redis
// beside one instance with memory stores (issue 23): a confirmed
// 2026-07-28 flow with the single-use ledger, a 2025-11-25 blocking call
// whose answer crosses instances, and a task with one question. For each it
// prints throughput and latency (p50, p99) and the Redis commands per
// operation, on
//
//   - 1 instance: one process with memory stores (no Redis), reached
//     directly;
//   - 1 instance + nginx: the same process behind nginx (what the proxy
//     alone adds);
//   - 3 instances + nginx + Redis: three processes sharing a redis-server
//     (redisfleet: ledger, tasks, sessions) behind nginx, round-robin, no
//     stickiness: the two rounds of a flow, a call and its answer, a task's
//     requests land on different instances.
//
// It starts every process itself on loopback ports it picks (redis-server
// on a Unix socket, no persistence), and stops them at the end. Without
// nginx or redis-server it says how to get them and exits 0 (nothing
// measured). Run it with bench/fleet.sh.
//
// Every process shares the machine's CPUs with the load generator (no
// pinning): the figures are a fleet's on this machine, for comparing the
// rows of one run, not one server's capacity.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

func main() {
	duration := flag.Duration("duration", 4*time.Second, "recorded time per measurement")
	warmup := flag.Duration("warmup", time.Second, "unrecorded time before each measurement")
	reps := flag.Int("reps", 2, "interleaved repetitions (the table shows the median)")
	concurrency := flag.Int("concurrency", 16, "concurrent clients")
	scenarios := flag.String("scenarios", "flow,crossing,task", "scenarios: flow (confirmed flow with the ledger), crossing (a 2025-11-25 answer crossing instances), task (a task with one question)")
	flag.Parse()
	if sock := os.Getenv(instanceEnv); sock != "" {
		if err := serveInstance(sock); err != nil {
			fmt.Fprintln(os.Stderr, "fleet instance:", err)
			os.Exit(1)
		}
		return
	}
	cfg := config{duration: *duration, warmup: *warmup, reps: *reps, concurrency: *concurrency, scenarios: strings.Split(*scenarios, ",")}
	for _, s := range cfg.scenarios {
		if !slices.Contains([]string{"flow", "crossing", "task"}, s) {
			fmt.Fprintf(os.Stderr, "fleet: unknown scenario %q\n", s)
			os.Exit(2)
		}
	}
	ok, err := run(cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

type config struct {
	duration, warmup  time.Duration
	reps, concurrency int
	scenarios         []string
}

// ---------------------------------------------------------------- instance

// instanceEnv, set, makes the process one instance, on memory stores
// ("memory") or on the Redis at the Unix socket it names; it prints its
// address and serves until its stdin closes.
const instanceEnv = "BATON_FLEET_BENCH_INSTANCE"

// benchKey is the state key every instance shares.
// optionsChanged is what the instances change from Baton's defaults,
// printed beside the figures.
const optionsChanged = "server.TaskOptions{TTL: 2m, MaxRunning: -1, MaxRunningPerClient: -1, MaxStored: -1, MaxStoredPerClient: -1}, legacy.Options{MaxSessionsPerClient: -1}; everything else at the defaults"

var benchKey = []byte("baton-bench-fleet-state-key-0001")

// serveInstance runs one instance until its stdin closes: on memory
// stores, or on the Redis at the Unix socket sock.
func serveInstance(sock string) error {
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "fleet-1", Secret: benchKey})
	if err != nil {
		return err
	}
	var ledger server.Ledger = server.NewMemoryLedger(nil)
	// The per-client quotas are lifted (optionsChanged, printed beside the
	// figures): every client of the load generator is one anonymous
	// client at one address (nginx's), and a run creates tens of
	// thousands of tasks. The answers per session per second stay at the
	// default.
	taskOpts := server.TaskOptions{TTL: 2 * time.Minute, MaxRunning: -1, MaxRunningPerClient: -1, MaxStored: -1, MaxStoredPerClient: -1}
	legacyOpts := &legacy.Options{MaxSessionsPerClient: -1}
	trips := &tripCounter{}
	if sock != "memory" {
		rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock, PoolSize: 64})
		defer rdb.Close()
		rdb.AddHook(trips)
		f := redisfleet.New(rdb, redisfleet.Options{Prefix: "bench:"})
		ledger = f.Ledger()
		taskOpts.Store = f.Tasks()
		legacyOpts.Store = f.Sessions()
	}
	srv, err := server.New(mcp.Implementation{Name: "baton-fleet-bench", Version: "1.0.0"}, &server.Options{
		StateKeys: ring,
		Logger:    slog.New(slog.DiscardHandler),
		Tasks:     taskOpts,
		Legacy:    legacy.New(legacyOpts),
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	form, err := elicit.NewForm("Proceed?", elicit.Boolean("confirm").Required())
	if err != nil {
		return err
	}
	ask := func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.Elicit(ctx, form, server.WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		return server.TextResult("answered " + string(res.Action)), nil
	}
	if err := srv.AddTool(server.Tool{Name: "ask"}, ask); err != nil {
		return err
	}
	if err := srv.AddTool(server.Tool{Name: "task"}, ask, server.RunAsTask(server.TaskRequired)); err != nil {
		return err
	}
	err = srv.AddTool(server.Tool{Name: "transfer"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		res, err := req.Elicit(ctx, form, server.WithKey("confirm"))
		if err != nil {
			return nil, err
		}
		if res.Action != elicit.ActionAccept {
			return server.ErrorResult("declined"), nil
		}
		if err := req.Redeem(ctx, ledger); err != nil {
			return nil, err
		}
		return server.TextResult("transferred"), nil
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", srv)
	// The driver reads the Redis round trips made so far here, directly
	// (not through nginx).
	mux.HandleFunc("GET /debug/redis-round-trips", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, trips.n.Load())
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	fmt.Println(ln.Addr().String())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the driver goes
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(ctx)
}

// tripCounter is a redis.Hook counting round trips: a command, or a
// pipeline or transaction sent as one.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// ---------------------------------------------------------------- processes

// proc is a child process.
type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	log   strings.Builder
}

func (p *proc) stop() {
	if p.stdin != nil {
		_ = p.stdin.Close()
	}
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(3 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	}
}

// startInstance starts this binary as an instance and returns its address.
func startInstance(sock string) (*proc, string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), instanceEnv+"="+sock)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	p := &proc{cmd: cmd, stdin: in, out: bufio.NewReader(out)}
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.stop()
		return nil, "", fmt.Errorf("instance did not start: %w", err)
	}
	return p, strings.TrimSpace(line), nil
}

func binary(env string, names ...string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	for _, n := range names {
		if p, err := exec.LookPath(filepath.Base(n)); err == nil {
			return p
		}
		if _, err := os.Stat(n); err == nil {
			return n
		}
	}
	return ""
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// nginxConf is nginx in front of the instances: one server block per
// upstream group, round-robin, keep-alive to the instances, no buffering
// (SSE), no access log.
const nginxConf = `@USER@
daemon off;
master_process on;
worker_processes 1;
pid @PREFIX@/nginx.pid;
lock_file @PREFIX@/nginx.lock;
error_log @PREFIX@/error.log warn;
events { worker_connections 1024; }
http {
    client_body_temp_path @PREFIX@/client_body;
    proxy_temp_path @PREFIX@/proxy;
    fastcgi_temp_path @PREFIX@/fastcgi;
    uwsgi_temp_path @PREFIX@/uwsgi;
    scgi_temp_path @PREFIX@/scgi;
    access_log off;
    upstream fleet { @FLEET@ keepalive 64; }
    upstream single { @SINGLE@ keepalive 64; }
    server {
        listen @LISTEN_FLEET@;
        location / {
            proxy_pass http://fleet;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 60s;
        }
    }
    server {
        listen @LISTEN_SINGLE@;
        location / {
            proxy_pass http://single;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 60s;
        }
    }
}
`

// startNginx starts nginx with fleet and single as its upstreams and
// returns the two front addresses.
func startNginx(bin, dir string, fleet []string, single string) (*proc, string, string, error) {
	userDirective := ""
	if os.Geteuid() == 0 {
		u, err := user.Current()
		if err != nil {
			return nil, "", "", err
		}
		g, err := user.LookupGroupId(u.Gid)
		if err != nil {
			return nil, "", "", err
		}
		userDirective = "user " + u.Username + " " + g.Name + ";"
	}
	up := func(addrs ...string) string {
		var b strings.Builder
		for _, a := range addrs {
			b.WriteString("server " + a + "; ")
		}
		return b.String()
	}
	prefix := filepath.Join(dir, "nginx")
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return nil, "", "", err
	}
	var last error
	for range 3 {
		pf, err := freePort()
		if err != nil {
			return nil, "", "", err
		}
		ps, err := freePort()
		if err != nil {
			return nil, "", "", err
		}
		lf, ls := "127.0.0.1:"+strconv.Itoa(pf), "127.0.0.1:"+strconv.Itoa(ps)
		conf := strings.NewReplacer("@USER@", userDirective, "@PREFIX@", prefix, "@FLEET@", up(fleet...), "@SINGLE@", up(single),
			"@LISTEN_FLEET@", lf, "@LISTEN_SINGLE@", ls).Replace(nginxConf)
		path := filepath.Join(prefix, "nginx.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			return nil, "", "", err
		}
		cmd := exec.Command(bin, "-p", prefix, "-c", path, "-e", filepath.Join(prefix, "error.log"))
		p := &proc{cmd: cmd}
		cmd.Stdout, cmd.Stderr = &p.log, &p.log
		if err := cmd.Start(); err != nil {
			return nil, "", "", err
		}
		if waitHTTP("http://"+lf+"/") && waitHTTP("http://"+ls+"/") {
			return p, lf, ls, nil
		}
		_ = cmd.Process.Signal(os.Interrupt)
		p.stop()
		b, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
		last = fmt.Errorf("nginx did not start: %s%s", p.log.String(), b)
	}
	return nil, "", "", last
}

// waitHTTP waits until u answers at all (any status).
func waitHTTP(u string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(u)
		if err == nil {
			res.Body.Close()
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// startRedis starts redis-server on a Unix socket in dir, without
// persistence.
func startRedis(bin, dir string) (*proc, string, error) {
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no")
	p := &proc{cmd: cmd}
	cmd.Stdout, cmd.Stderr = &p.log, &p.log
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if rdb.Ping(context.Background()).Err() == nil {
			return p, sock, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return nil, "", fmt.Errorf("redis-server did not start: %s", p.log.String())
}
