// Command bench is Baton's load harness: it compares Baton with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk v1.8.0, stateless
// Streamable HTTP), with github.com/mark3labs/mcp-go v1.2.1 (stateless
// Streamable HTTP) and with a bare net/http floor, on a plain tools/call
// (scenario echo) and on a two-round MRTR flow with a form elicitation and
// a sealed requestState (scenario confirm).
//
// It runs as two processes: the load generator (this process) re-executes
// itself with -serve, and that child starts the servers in-process on
// 127.0.0.1:0 and takes profiling commands on its stdin. So the server
// process's CPU profile holds server work only and the two heaps are
// separate; they still share the machine's cores.
//
//	cd bench && go run . -duration 10s
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/pprof/profile"
)

func main() {
	var (
		serve       = flag.Bool("serve", false, "internal: run the servers (the child process)")
		concurrency = flag.Int("concurrency", 32, "concurrent workers (each with its own keep-alive connection)")
		duration    = flag.Duration("duration", 10*time.Second, "recorded time per measurement")
		warmup      = flag.Duration("warmup", 2*time.Second, "unrecorded (but checked) time before each measurement")
		reps        = flag.Int("reps", 3, "measurements per server and scenario, interleaved; the median is reported")
		servers     = flag.String("servers", strings.Join(serverNames, ","), "servers to measure: baton (net/http), baton-echo (srv.Handler()), gosdk, mcpgo, floor")
		scenarios   = flag.String("scenarios", "echo,confirm", "scenarios: echo (a), confirm (b), hostile (hostile bodies beside benign ones, one at a time)")
		cpuprofile  = flag.String("cpuprofile", "", "write CPU profiles of the Baton (net/http) server's measured windows to PREFIX-echo.pprof and PREFIX-confirm.pprof")
		hRequests   = flag.Int("hostile-requests", 15, "hostile: requests per body (hostile and its benign twin each), unless -hostile-budget runs out first")
		hBudget     = flag.Duration("hostile-budget", 3*time.Second, "hostile: time per row after which it stops once each side has 3 requests")
		hTimeout    = flag.Duration("hostile-timeout", time.Minute, "hostile: client timeout per request (a timeout is a hang: FAIL, and the server process is restarted)")
		hDeadline   = flag.Duration("hostile-deadline", 10*time.Minute, "hostile: rows not started by then are skipped (reported, exit status 1)")
		hRows       = flag.String("hostile-rows", "", "hostile: run only the rows whose id matches this regular expression (ids: -hostile-list)")
		hList       = flag.Bool("hostile-list", false, "hostile: list the rows (id, kind, description) and exit")
	)
	flag.StringVar(cpuprofile, "profile", "", "same as -cpuprofile")
	flag.StringVar(scenarios, "scenario", "echo,confirm", "same as -scenarios")
	flag.Parse()
	if *hList {
		listHostile(os.Stdout)
		return
	}
	if *serve {
		if err := runServers(); err != nil {
			fmt.Fprintln(os.Stderr, "serve:", err)
			os.Exit(1)
		}
		return
	}
	cfg := config{
		concurrency: *concurrency, duration: *duration, warmup: *warmup, reps: *reps,
		servers: split(*servers), scenarios: split(*scenarios), profile: *cpuprofile,
		hostile: hostileConfig{requests: *hRequests, budget: *hBudget, timeout: *hTimeout, rows: *hRows, deadline: *hDeadline},
	}
	for _, s := range cfg.servers {
		if !slices.Contains(serverNames, s) {
			fatal(fmt.Errorf("unknown server %q", s))
		}
	}
	hostile := false
	var load []string
	for _, s := range cfg.scenarios {
		switch s {
		case "echo", "confirm":
			load = append(load, s)
		case "hostile":
			hostile = true
		default:
			fatal(fmt.Errorf("unknown scenario %q", s))
		}
	}
	ok := true
	if len(load) > 0 {
		cfg.scenarios = load
		loadOK, err := run(cfg)
		if err != nil {
			fatal(err)
		}
		ok = loadOK
	}
	if hostile {
		hostileOK, err := runHostile(cfg.hostile)
		if err != nil {
			fatal(err)
		}
		ok = ok && hostileOK
	}
	if !ok {
		os.Exit(1)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(2)
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

type config struct {
	concurrency, reps  int
	duration, warmup   time.Duration
	servers, scenarios []string
	profile            string
	hostile            hostileConfig
}

// ---------------------------------------------------------------- child

// runServers is the child: start the servers, print their URLs as one
// JSON line, then obey commands on stdin until it closes:
//
//	gc               collect garbage (before each measurement)
//	cpu              report the process's CPU time (user+system, ns)
//	start            start the CPU profile
//	stop SCENARIO    stop it and keep it under SCENARIO
//	write SCENARIO F merge the profiles kept under SCENARIO into file F
func runServers() error {
	urls, _, err := startServers()
	if err != nil {
		return err
	}
	line, _ := json.Marshal(urls)
	fmt.Printf("%s\n", line)
	var (
		buf  bytes.Buffer
		kept = map[string][]*profile.Profile{}
	)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		var err error
		switch {
		case len(f) == 1 && f[0] == "gc":
			runtime.GC()
		case len(f) == 1 && f[0] == "cpu":
			fmt.Printf("ok %d\n", cpuTime())
			continue
		case len(f) == 1 && f[0] == "start":
			buf.Reset()
			err = pprof.StartCPUProfile(&buf)
		case len(f) == 2 && f[0] == "stop":
			pprof.StopCPUProfile()
			var p *profile.Profile
			if p, err = profile.Parse(bytes.NewReader(buf.Bytes())); err == nil {
				kept[f[1]] = append(kept[f[1]], p)
			}
		case len(f) == 3 && f[0] == "write":
			var p *profile.Profile
			if p, err = profile.Merge(kept[f[1]]); err == nil {
				var out *os.File
				if out, err = os.Create(f[2]); err == nil {
					err = p.Write(out)
					if cerr := out.Close(); err == nil {
						err = cerr
					}
				}
			}
		default:
			err = fmt.Errorf("unknown command %q", in.Text())
		}
		if err != nil {
			fmt.Printf("error %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		} else {
			fmt.Println("ok")
		}
	}
	return in.Err()
}

// child is the parent's handle on the server process.
type child struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startChild() (*child, map[string]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe, "-serve")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	if !c.out.Scan() {
		return nil, nil, fmt.Errorf("server process: no addresses (%v)", c.out.Err())
	}
	var urls map[string]string
	if err := json.Unmarshal(c.out.Bytes(), &urls); err != nil {
		return nil, nil, fmt.Errorf("server process: %v: %s", err, c.out.Bytes())
	}
	return c, urls, nil
}

func (c *child) do(cmd string) error {
	_, err := c.query(cmd)
	return err
}

// query sends cmd and returns what follows "ok" in the reply.
func (c *child) query(cmd string) (string, error) {
	if _, err := fmt.Fprintln(c.in, cmd); err != nil {
		return "", err
	}
	if !c.out.Scan() {
		return "", fmt.Errorf("server process gone (%v)", c.out.Err())
	}
	r := c.out.Text()
	if r != "ok" && !strings.HasPrefix(r, "ok ") {
		return "", fmt.Errorf("%s: %s", cmd, r)
	}
	return strings.TrimPrefix(strings.TrimPrefix(r, "ok"), " "), nil
}

// cpuTime is this process's CPU time, user and system, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func (c *child) close() {
	c.in.Close()
	c.cmd.Wait()
}

// ---------------------------------------------------------------- parent

func run(cfg config) (bool, error) {
	c, urls, err := startChild()
	if err != nil {
		return false, err
	}
	defer c.close()

	printEnvironment(cfg)
	transports := map[string]*http.Transport{}
	for _, s := range cfg.servers {
		transports[s] = newTransport(cfg.concurrency)
	}
	all := map[string]map[string][]*result{} // scenario -> server -> reps
	for _, sc := range cfg.scenarios {
		all[sc] = map[string][]*result{}
	}
	var cmdErr error
	must := func(cmd string) {
		if err := c.do(cmd); err != nil && cmdErr == nil {
			cmdErr = err
		}
	}
	for rep := range cfg.reps {
		for _, sc := range cfg.scenarios {
			// Rotate the order every repetition so no server always
			// follows the same one.
			n := len(cfg.servers)
			for i := range n {
				s := cfg.servers[(i+rep)%n]
				must("gc")
				profiling := cfg.profile != "" && s == "baton"
				var srvCPU0, srvCPU1, cliCPU0, cliCPU1 int64
				serverCPU := func() int64 {
					v, err := c.query("cpu")
					if err != nil && cmdErr == nil {
						cmdErr = err
					}
					n, _ := strconv.ParseInt(v, 10, 64)
					return n
				}
				onMeasure := func() {
					if profiling {
						must("start")
					}
					srvCPU0, cliCPU0 = serverCPU(), cpuTime()
				}
				onDone := func() {
					srvCPU1, cliCPU1 = serverCPU(), cpuTime()
					if profiling {
						must("stop " + sc)
					}
				}
				r := measure(transports[s], urls[s], sc, cfg.concurrency, cfg.warmup, cfg.duration, onMeasure, onDone)
				r.Server = s
				r.ServerCPU, r.ClientCPU = time.Duration(srvCPU1-srvCPU0), time.Duration(cliCPU1-cliCPU0)
				all[sc][s] = append(all[sc][s], r)
				fmt.Printf("# rep %d/%d  %-7s %-10s %9.0f ops/s  p50 %8s  p99 %8s  server CPU %6.1fµs/op  client CPU %6.1fµs/op  errors %d\n",
					rep+1, cfg.reps, sc, s, r.OpsPerSec(), fmtDur(r.Hist.quantile(0.50)), fmtDur(r.Hist.quantile(0.99)),
					r.cpuPerOp(r.ServerCPU), r.cpuPerOp(r.ClientCPU), r.Errors)
				for _, e := range r.FirstErrors {
					fmt.Printf("#   error: %s\n", e)
				}
			}
		}
	}
	if cmdErr != nil {
		return false, cmdErr
	}
	if cfg.profile != "" && slices.Contains(cfg.servers, "baton") {
		for _, sc := range cfg.scenarios {
			path := cfg.profile + "-" + sc + ".pprof"
			if err := c.do("write " + sc + " " + path); err != nil {
				return false, err
			}
			fmt.Printf("# CPU profile of baton, %s: %s\n", sc, path)
		}
	}
	return report(cfg, all), nil
}

// summary is the median of one server's repetitions in one scenario.
type summary struct {
	ops, p50, p99 float64
	min, max      float64
	srvCPU        float64 // µs of server-process CPU per operation (median)
	errors        uint64
	stateLen      int64
	n             int
}

func summarize(rs []*result) *summary {
	if len(rs) == 0 {
		return nil
	}
	var ops, p50, p99, cpu []float64
	s := &summary{n: len(rs)}
	for _, r := range rs {
		ops = append(ops, r.OpsPerSec())
		cpu = append(cpu, r.cpuPerOp(r.ServerCPU))
		p50 = append(p50, float64(r.Hist.quantile(0.50)))
		p99 = append(p99, float64(r.Hist.quantile(0.99)))
		s.errors += r.Errors
		if r.Ops == 0 {
			s.errors++ // nothing measured is not a valid run either
		}
		s.stateLen = max(s.stateLen, r.StateLen)
	}
	s.ops, s.p50, s.p99, s.srvCPU = median(ops), median(p50), median(p99), median(cpu)
	s.min, s.max = slices.Min(ops), slices.Max(ops)
	return s
}

func median(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
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

var scenarioTitle = map[string]string{
	"echo":    "(a) echo: one plain tools/call per operation",
	"confirm": "(b) confirm: one MRTR flow per operation (round 1 input_required + round 2 complete)",
}

func report(cfg config, all map[string]map[string][]*result) bool {
	sum := map[string]map[string]*summary{}
	valid := true
	for _, sc := range cfg.scenarios {
		sum[sc] = map[string]*summary{}
		fmt.Printf("\n## %s\n\n", scenarioTitle[sc])
		fmt.Println("| server | ops/s (median) | min–max ops/s | p50 | p99 | server CPU/op | errors | state bytes |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range cfg.servers {
			m := summarize(all[sc][s])
			sum[sc][s] = m
			if m.errors > 0 {
				valid = false
			}
			state := "–"
			if sc == "confirm" {
				state = fmt.Sprint(m.stateLen)
			}
			errs := fmt.Sprint(m.errors)
			if m.errors > 0 {
				errs += " INVALID"
			}
			fmt.Printf("| %s | %.0f | %.0f–%.0f | %s | %s | %.1fµs | %s | %s |\n", s, m.ops, m.min, m.max,
				fmtDur(time.Duration(m.p50)), fmtDur(time.Duration(m.p99)), m.srvCPU, errs, state)
		}
	}

	type target struct {
		label    string
		sc, num  string
		dsc, den string
		min      float64
	}
	var targets []target
	for _, b := range []string{"baton", "baton-echo"} {
		targets = append(targets,
			target{b + "/floor (a)", "echo", b, "echo", "floor", 0.6},
			target{b + "/gosdk (a)", "echo", b, "echo", "gosdk", 4},
			target{b + "/mcpgo (a)", "echo", b, "echo", "mcpgo", 4},
			target{b + "-flow/floor-single-request (b)", "confirm", b, "echo", "floor", 0.35},
			target{b + "-flow/gosdk-flow (b)", "confirm", b, "confirm", "gosdk", 4},
			target{b + "-flow/mcpgo-flow (b)", "confirm", b, "confirm", "mcpgo", 4},
		)
	}
	fmt.Printf("\n## Ratios\n\nvalue = ratio of the ops/s medians (the verdict); paired = median (min–max) of the per-repetition ratios.\n\n")
	fmt.Printf("| ratio | value | paired | target | verdict |\n|---|---:|---:|---:|---|\n")
	for _, t := range targets {
		n, d := sum[t.sc][t.num], sum[t.dsc][t.den]
		if n == nil || d == nil {
			continue
		}
		var paired []float64
		for i, nr := range all[t.sc][t.num] {
			if i < len(all[t.dsc][t.den]) {
				paired = append(paired, nr.OpsPerSec()/all[t.dsc][t.den][i].OpsPerSec())
			}
		}
		verdict := "MISS"
		v := n.ops / d.ops
		if v >= t.min {
			verdict = "PASS"
		}
		if n.errors > 0 || d.errors > 0 {
			verdict = "INVALID (errors)"
		}
		fmt.Printf("| %s | %.2f | %.2f (%.2f–%.2f) | ≥ %.2f | %s |\n", t.label, v,
			median(paired), slices.Min(paired), slices.Max(paired), t.min, verdict)
	}
	if b, f := sum["confirm"]["baton"], sum["confirm"]["floor"]; b != nil && f != nil {
		fmt.Printf("| baton-flow/floor-flow (info) | %.2f | | – | – |\n", b.ops/f.ops)
	}
	if b, f := sum["confirm"]["baton"], sum["echo"]["baton"]; b != nil && f != nil {
		fmt.Printf("| baton-flow/baton-single-request (info) | %.2f | | – | – |\n", b.ops/f.ops)
	}
	if !valid {
		fmt.Println("\nINVALID: some measurements had errors (see the # lines above); these figures must not be reported.")
	}
	return valid
}

func printEnvironment(cfg config) {
	printMachine()
	fmt.Printf("# concurrency %d, warmup %s + duration %s per measurement, %d interleaved reps; servers %s; scenarios %s\n",
		cfg.concurrency, cfg.warmup, cfg.duration, cfg.reps, strings.Join(cfg.servers, ","), strings.Join(cfg.scenarios, ","))
}

// printMachine prints the time, Go version and CPUs.
func printMachine() {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if _, v, ok := strings.Cut(l, ":"); ok {
					cpu = strings.TrimSpace(v)
				}
				break
			}
		}
	}
	fmt.Printf("# %s  %s  %d CPUs (%s), GOMAXPROCS %d\n", time.Now().Format(time.RFC3339), runtime.Version(), runtime.NumCPU(), cpu, runtime.GOMAXPROCS(0))
}
