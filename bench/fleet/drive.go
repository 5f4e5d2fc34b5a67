package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// setup is one way of serving the scenarios.
type setup struct {
	name      string
	url       string        // the MCP endpoint the clients use
	redis     *redis.Client // the fleet's Redis, nil without
	instances []string      // the instances' addresses, to read their round trips
}

// sample is one measurement.
type sample struct {
	ops       int
	elapsed   time.Duration
	lat       []time.Duration // sorted
	errors    int
	redisCmds int64 // commands Redis processed in the window (scripts' own included)
	trips     int64 // round trips the instances made to Redis in the window
}

func (s *sample) opsPerSec() float64 { return float64(s.ops) / s.elapsed.Seconds() }

func (s *sample) quantile(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[min(len(s.lat)-1, int(q*float64(len(s.lat))))]
}

var scenarioTitle = map[string]string{
	"flow":     "a confirmed 2026-07-28 flow with the single-use ledger (two requests: input_required, then the answer and the redemption)",
	"crossing": "a 2025-11-25 blocking call: tools/call, elicitation/create on its SSE stream, the answer POSTed (to another instance in the fleet, two times in three), the result",
	"task":     "a task with one question: tools/call (task created), tasks/get until input_required, tasks/update with the answer, tasks/get until completed (polls 5 ms apart)",
}

func accept(context.Context, *elicit.Request) (*elicit.Result, error) {
	return &elicit.Result{Action: elicit.ActionAccept, Content: []byte(`{"confirm":true}`)}, nil
}

// newOp returns one client's operation for scenario against url, and its
// cleanup.
func newOp(ctx context.Context, hc *http.Client, url, scenario string) (func() error, func(), error) {
	opts := &mcptest.Options{Elicitation: accept, ClientInfo: mcp.Implementation{Name: "baton-fleet-bench", Version: "1.0.0"}}
	tool, want := "transfer", "transferred"
	switch scenario {
	case "crossing":
		opts.Protocol = mcp.LegacyProtocolVersion
		tool, want = "ask", "answered accept"
	case "task":
		opts.Tasks, opts.PollInterval = true, 5*time.Millisecond
		tool, want = "task", "answered accept"
	}
	c, err := mcptest.New(mcptest.URL(url, hc), opts)
	if err != nil {
		return nil, nil, err
	}
	done := func() {}
	if scenario == "crossing" {
		if _, err := c.Connect(ctx); err != nil {
			return nil, nil, fmt.Errorf("initialize: %w", err)
		}
		done = func() {
			ectx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, _ = c.EndSession(ectx)
		}
	}
	op := func() error {
		r, err := c.CallTool(ctx, tool, nil)
		if err != nil {
			return err
		}
		if r.IsError || r.Text() != want {
			return fmt.Errorf("%s: got %q (isError %v), want %q", tool, r.Text(), r.IsError, want)
		}
		return nil
	}
	return op, done, nil
}

// measure runs cfg.concurrency clients of scenario against st: warmup,
// then the recorded window.
func measure(cfg config, st setup, scenario string) *sample {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 4 * cfg.concurrency, MaxIdleConnsPerHost: 4 * cfg.concurrency, IdleConnTimeout: time.Minute}}
	defer hc.CloseIdleConnections()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var recording, stop atomic.Bool
	var errs atomic.Int64
	var firstErr sync.Once
	lats := make([][]time.Duration, cfg.concurrency)
	var wg, ready sync.WaitGroup
	for i := range cfg.concurrency {
		wg.Add(1)
		ready.Add(1)
		go func() {
			defer wg.Done()
			op, done, err := newOp(ctx, hc, st.url, scenario)
			ready.Done()
			if err != nil {
				errs.Add(1)
				firstErr.Do(func() { fmt.Fprintf(os.Stderr, "# %s %s: %v\n", st.name, scenario, err) })
				return
			}
			defer done()
			for !stop.Load() {
				rec := recording.Load()
				t0 := time.Now()
				err := op()
				d := time.Since(t0)
				if err != nil {
					if stop.Load() {
						return // cut short by the end of the measurement
					}
					errs.Add(1)
					firstErr.Do(func() { fmt.Fprintf(os.Stderr, "# %s %s: %v\n", st.name, scenario, err) })
					continue
				}
				if rec && recording.Load() {
					lats[i] = append(lats[i], d)
				}
			}
		}()
	}
	ready.Wait()
	time.Sleep(cfg.warmup)
	cmds0, trips0 := redisCommands(st.redis), roundTrips(st.instances)
	t0 := time.Now()
	recording.Store(true)
	time.Sleep(cfg.duration)
	recording.Store(false)
	elapsed := time.Since(t0)
	cmds1, trips1 := redisCommands(st.redis), roundTrips(st.instances)
	stop.Store(true)
	cancel()
	wg.Wait()
	s := &sample{elapsed: elapsed, errors: int(errs.Load()), redisCmds: cmds1 - cmds0, trips: trips1 - trips0}
	for _, l := range lats {
		s.lat = append(s.lat, l...)
	}
	s.ops = len(s.lat)
	slices.Sort(s.lat)
	return s
}

// roundTrips is the sum of the Redis round trips the instances made.
func roundTrips(instances []string) int64 {
	var n int64
	for _, a := range instances {
		res, err := http.Get("http://" + a + "/debug/redis-round-trips")
		if err != nil {
			continue
		}
		var v int64
		_, _ = fmt.Fscan(res.Body, &v)
		res.Body.Close()
		n += v
	}
	return n
}

// redisCommands is Redis's total_commands_processed (0 without Redis).
func redisCommands(rdb *redis.Client) int64 {
	if rdb == nil {
		return 0
	}
	info, err := rdb.Info(context.Background(), "stats").Result()
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "total_commands_processed:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// run starts the processes, measures every scenario on every setup and
// prints the tables; ok is false when an operation failed.
func run(cfg config, w io.Writer) (bool, error) {
	nginxBin := binary("BATON_NGINX", "/usr/sbin/nginx", "/usr/local/sbin/nginx")
	redisBin := binary("BATON_REDIS_SERVER", "/usr/bin/redis-server", "/usr/local/bin/redis-server")
	switch {
	case nginxBin == "":
		fmt.Fprintln(w, "\n## Fleet: skipped: nginx not found (apt-get install nginx, or set BATON_NGINX)")
		return true, nil
	case redisBin == "":
		fmt.Fprintln(w, "\n## Fleet: skipped: redis-server not found (apt-get install redis-server, or set BATON_REDIS_SERVER)")
		return true, nil
	}
	dir, err := os.MkdirTemp("", "baton-fleet-bench-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	var procs []*proc
	defer func() {
		for _, p := range slices.Backward(procs) {
			p.stop()
		}
	}()
	rp, sock, err := startRedis(redisBin, dir)
	if err != nil {
		return false, err
	}
	procs = append(procs, rp)
	var fleet []string
	for range 3 {
		p, addr, err := startInstance(sock)
		if err != nil {
			return false, err
		}
		procs = append(procs, p)
		fleet = append(fleet, addr)
	}
	sp, single, err := startInstance("memory")
	if err != nil {
		return false, err
	}
	procs = append(procs, sp)
	np, frontFleet, frontSingle, err := startNginx(nginxBin, dir, fleet, single)
	if err != nil {
		return false, err
	}
	procs = append(procs, np)
	rdb := redis.NewClient(&redis.Options{Network: "unix", Addr: sock})
	defer rdb.Close()
	setups := []setup{
		{name: "1 instance (memory)", url: "http://" + single + "/mcp"},
		{name: "1 instance (memory) + nginx", url: "http://" + frontSingle + "/mcp"},
		{name: "3 instances + nginx + Redis", url: "http://" + frontFleet + "/mcp", redis: rdb, instances: fleet},
	}

	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Fprintf(w, "\n## Fleet: three instances behind nginx with Redis beside one instance\n\n")
	fmt.Fprintf(w, "# options changed from the defaults: %s\n", optionsChanged)
	fmt.Fprintf(w, "# concurrency %d, warmup %s + duration %s per measurement, %d interleaved reps; every process (4 instances, nginx, redis-server, this generator) shares the machine's CPUs; load average at start %s\n",
		cfg.concurrency, cfg.warmup, cfg.duration, cfg.reps, load)
	all := map[string]map[string][]*sample{}
	for _, sc := range cfg.scenarios {
		all[sc] = map[string][]*sample{}
	}
	for rep := range cfg.reps {
		for _, sc := range cfg.scenarios {
			for i := range setups {
				st := setups[(i+rep)%len(setups)]
				all[sc][st.name] = append(all[sc][st.name], measure(cfg, st, sc))
			}
		}
	}
	ok := true
	for _, sc := range cfg.scenarios {
		fmt.Fprintf(w, "\n### %s: %s\n\n", sc, scenarioTitle[sc])
		fmt.Fprintln(w, "| setup | ops/s (median) | min–max | p50 | p99 | Redis round trips/op | Redis commands/op | errors |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
		med := map[string]*sample{}
		for _, st := range setups {
			ss := all[sc][st.name]
			slices.SortFunc(ss, func(a, b *sample) int { return int(a.opsPerSec() - b.opsPerSec()) })
			m := ss[len(ss)/2]
			med[st.name] = m
			errsN := 0
			for _, s := range ss {
				errsN += s.errors
			}
			cmds, trips := "–", "–"
			if st.redis != nil && m.ops > 0 {
				cmds = fmt.Sprintf("%.1f", float64(m.redisCmds)/float64(m.ops))
				trips = fmt.Sprintf("%.1f", float64(m.trips)/float64(m.ops))
			}
			errCol := strconv.Itoa(errsN)
			if errsN > 0 {
				errCol += " INVALID"
				ok = false
			}
			fmt.Fprintf(w, "| %s | %.0f | %.0f–%.0f | %s | %s | %s | %s | %s |\n", st.name, m.opsPerSec(), ss[0].opsPerSec(), ss[len(ss)-1].opsPerSec(),
				fmtDur(m.quantile(0.5)), fmtDur(m.quantile(0.99)), trips, cmds, errCol)
		}
		f, one, oneN := med[setups[2].name], med[setups[0].name], med[setups[1].name]
		if f != nil && one != nil && oneN != nil && one.ops > 0 && oneN.ops > 0 {
			fmt.Fprintf(w, "\nfleet / 1 instance: %.2f× the ops/s, p99 %.2f×; fleet / 1 instance behind nginx: %.2f× the ops/s, p99 %.2f×\n",
				f.opsPerSec()/one.opsPerSec(), float64(f.quantile(0.99))/float64(one.quantile(0.99)),
				f.opsPerSec()/oneN.opsPerSec(), float64(f.quantile(0.99))/float64(oneN.quantile(0.99)))
		}
	}
	if !ok {
		fmt.Fprintln(w, "\nINVALID: some operations failed (see the # lines above).")
	}
	return ok, errors.Join()
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	}
}
