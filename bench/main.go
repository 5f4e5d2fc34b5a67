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
	"runtime/metrics"
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
		servers     = flag.String("servers", strings.Join(serverNames, ","), "servers to measure: baton (net/http), baton-echo (echo.WrapHandler), gosdk, mcpgo, floor")
		scenarios   = flag.String("scenarios", "echo,confirm", "scenarios: echo (a), confirm (b), rounds (Baton asking 1, 2, 4 … questions in sequence; see -rounds), carried (one retry whose state carries k answers; see -carried), hostile (hostile bodies beside benign ones, one at a time)")
		rounds      = flag.String("rounds", "1,2,4,8,16", "rounds: the numbers of questions asked in sequence, one measurement each")
		carried     = flag.String("carried", "1,16", "carried: the numbers of answers the retry's state carries, one measurement each, completing and suspending")
		pin         = flag.Bool("pin", true, "pin the server process to CPU 0 and the load generator to CPU 1 (taskset; needs 2 CPUs)")
		generator   = flag.String("generator", "raw", "load generator client: raw (one TCP connection per worker, minimal HTTP/1.1) or nethttp (net/http's client; echo and confirm only)")
		fullEvery   = flag.Int("full-check", 8, "raw generator: decode every N-th response whole with encoding/json (every response gets the cheap checks)")
		cpuprofile  = flag.String("cpuprofile", "", "write CPU profiles of the Baton (net/http) server's measured windows to PREFIX-echo.pprof and PREFIX-confirm.pprof (see -profile-servers)")
		profServers = flag.String("profile-servers", "baton", "with -cpuprofile: the servers to profile (the files of a server other than baton are PREFIX-SCENARIO-SERVER.pprof)")
		hRequests   = flag.Int("hostile-requests", 15, "hostile: requests per body (hostile and its benign twin each), unless -hostile-budget runs out first")
		hBudget     = flag.Duration("hostile-budget", 3*time.Second, "hostile: time per row after which it stops once each side has 3 requests")
		hTimeout    = flag.Duration("hostile-timeout", time.Minute, "hostile: client timeout per request (a timeout is a hang: FAIL, and the server process is restarted)")
		hDeadline   = flag.Duration("hostile-deadline", 10*time.Minute, "hostile: rows not started by then are skipped (reported, exit status 1)")
		hRows       = flag.String("hostile-rows", "", "hostile: run only the rows whose id matches this regular expression (ids: -hostile-list)")
		hList       = flag.Bool("hostile-list", false, "hostile: list the rows (id, kind, description) and exit")
		memSessions = flag.Int("memory-sessions", 1000, "session-memory: the sessions opened, and the calls parked, per server")
		sessionReps = flag.Int("session-reps", 0, "repetitions of session-call and session-elicit (0: -reps)")
	)
	flag.StringVar(cpuprofile, "profile", "", "same as -cpuprofile")
	flag.StringVar(scenarios, "scenario", "echo,confirm", "same as -scenarios")
	flag.Parse()
	if *pin && !*serve && !*hList {
		if err := pinSelf(); err != nil {
			fatal(err)
		}
	}
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
		generator: *generator, fullEvery: *fullEvery, profServers: split(*profServers),
		hostile: hostileConfig{requests: *hRequests, budget: *hBudget, timeout: *hTimeout, rows: *hRows, deadline: *hDeadline},
	}
	memory := false
	cfg.sessionReps = *sessionReps
	if cfg.sessionReps <= 0 || cfg.sessionReps > cfg.reps {
		cfg.sessionReps = cfg.reps
	}
	for _, s := range cfg.servers {
		if !knownServer(s) {
			fatal(fmt.Errorf("unknown server %q", s))
		}
	}
	if *generator != "raw" && *generator != "nethttp" {
		fatal(fmt.Errorf("unknown generator %q", *generator))
	}
	hostile := false
	var load []string
	for _, s := range cfg.scenarios {
		switch s {
		case "echo", "confirm", "session-call", "session-elicit":
			load = append(load, s)
		case "session-memory":
			memory = true
		case "rounds":
			ns, err := roundsOf(*rounds)
			if err != nil {
				fatal(err)
			}
			for _, n := range ns {
				load = append(load, roundsScenario(n))
			}
		case "carried":
			ks, err := carriedCountsOf(*carried)
			if err != nil {
				fatal(err)
			}
			for _, suspend := range []bool{false, true} {
				for _, k := range ks {
					load = append(load, carriedScenario(k, suspend))
				}
			}
		case "hostile":
			hostile = true
		default:
			fatal(fmt.Errorf("unknown scenario %q", s))
		}
	}
	ok := true
	if memory {
		cfg.memorySessions = *memSessions
	}
	if len(load) > 0 || memory {
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
	generator          string
	fullEvery          int
	profServers        []string
	hostile            hostileConfig
	memorySessions     int // the session-memory table's sessions per server (0: no table)
	sessionReps        int // repetitions of the 2025-11-25 scenarios (≤ reps)
}

// pinnedEnv marks a process already placed on its CPU by pinSelf.
const pinnedEnv = "BATON_BENCH_PINNED"

// pinSelf re-executes the load generator on CPU 1 (taskset), so that the
// server process, started on CPU 0, has a core of its own. Go sizes
// GOMAXPROCS from the CPU affinity, so each process then runs with
// GOMAXPROCS 1.
func pinSelf() error {
	if os.Getenv(pinnedEnv) != "" {
		return nil
	}
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("-pin needs 2 CPUs, this process may use %d (use -pin=false)", runtime.NumCPU())
	}
	ts, err := exec.LookPath("taskset")
	if err != nil {
		return fmt.Errorf("-pin needs taskset (util-linux), or use -pin=false: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := append(os.Environ(), pinnedEnv+"=1")
	return syscall.Exec(ts, append([]string{"taskset", "-c", "1", exe}, os.Args[1:]...), env)
}

// ---------------------------------------------------------------- child

// runServers is the child: start the servers, print their URLs as one
// JSON line, then obey commands on stdin until it closes:
//
//	gc               collect garbage (before each measurement)
//	cpu              report the process's CPU time (user+system, ns)
//	mem              report the objects and bytes allocated so far
//	start            start the CPU profile
//	stop NAME        stop it and keep it under NAME (scenario/server)
//	write NAME F     merge the profiles kept under NAME into file F
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
		case len(f) == 1 && f[0] == "heap":
			heap, goroutines, stacks := liveMemory()
			fmt.Printf("ok %d %d %d\n", heap, goroutines, stacks)
			continue
		case len(f) == 1 && f[0] == "mem":
			objs, bytes := allocated()
			fmt.Printf("ok %d %d\n", objs, bytes)
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
	if os.Getenv(pinnedEnv) != "" {
		cmd = exec.Command("taskset", "-c", "0", exe, "-serve")
	}
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

// cpuStat is one CPU's line of /proc/stat: busy (everything but idle and
// iowait, steal included) and total time, in clock ticks.
type cpuStat struct{ busy, total int64 }

// readCPUStat reads every CPU's line of /proc/stat ("cpu0", "cpu1", …);
// nil when it cannot.
func readCPUStat() map[string]cpuStat {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil
	}
	out := map[string]cpuStat{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		var st cpuStat
		for i, v := range f[1:] {
			n, _ := strconv.ParseInt(v, 10, 64)
			if i >= 8 { // guest time is counted in user already
				break
			}
			st.total += n
			if i != 3 && i != 4 { // idle, iowait
				st.busy += n
			}
		}
		out[f[0]] = st
	}
	return out
}

// othersOnServerCore is the share (%) of the window in which the server's
// CPU (cpu0 when pinned) was busy with something else than the server
// process: other processes, interrupts, or time the hypervisor stole.
// -1 when not pinned or unknown.
func othersOnServerCore(a, b map[string]cpuStat, server, elapsed time.Duration) float64 {
	if os.Getenv(pinnedEnv) == "" || a == nil || b == nil {
		return -1
	}
	x, y := a["cpu0"], b["cpu0"]
	if y.total <= x.total {
		return -1
	}
	busy := float64(y.busy-x.busy) / float64(y.total-x.total) // share of the window
	return max(0, 100*(busy-float64(server)/float64(elapsed)))
}

// allocated is what this process has allocated so far: heap objects
// (tiny ones included) and bytes (runtime/metrics, no stop of the world).
func allocated() (objects, bytes uint64) {
	ms := []metrics.Sample{{Name: "/gc/heap/allocs:objects"}, {Name: "/gc/heap/tiny/allocs:objects"}, {Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(ms)
	return ms[0].Value.Uint64() + ms[1].Value.Uint64(), ms[2].Value.Uint64()
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
	ints := func(cmd string) []int64 {
		v, err := c.query(cmd)
		if err != nil && cmdErr == nil {
			cmdErr = err
		}
		var out []int64
		for _, f := range strings.Fields(v) {
			n, _ := strconv.ParseInt(f, 10, 64)
			out = append(out, n)
		}
		return append(out, 0, 0)
	}
	for rep := range cfg.reps {
		for _, sc := range cfg.scenarios {
			if legacyScenario(sc) && rep >= cfg.sessionReps {
				continue
			}
			servers := serversFor(cfg, sc)
			// Rotate the order every repetition so no server always
			// follows the same one.
			n := len(servers)
			for i := range n {
				s := servers[(i+rep)%n]
				must("gc")
				profiling := cfg.profile != "" && slices.Contains(cfg.profServers, baseName(s))
				var srvCPU0, srvCPU1, cliCPU0, cliCPU1 int64
				var mem0, mem1 []int64
				var stat0, stat1 map[string]cpuStat
				onMeasure := func() {
					if profiling {
						must("start")
					}
					mem0 = ints("mem")
					srvCPU0, cliCPU0 = ints("cpu")[0], cpuTime()
					stat0 = readCPUStat()
				}
				onDone := func() {
					srvCPU1, cliCPU1 = ints("cpu")[0], cpuTime()
					stat1 = readCPUStat()
					mem1 = ints("mem")
					if profiling {
						must("stop " + sc + "/" + s)
					}
				}
				r := measure(opsFor(cfg.generator, transports[s], urls[s], sc, cfg.fullEvery), sc, cfg.concurrency, cfg.warmup, cfg.duration, onMeasure, onDone)
				r.Server = s
				r.ServerCPU, r.ClientCPU = time.Duration(srvCPU1-srvCPU0), time.Duration(cliCPU1-cliCPU0)
				r.ServerAllocs, r.ServerAllocBytes = uint64(mem1[0]-mem0[0]), uint64(mem1[1]-mem0[1])
				r.Others = othersOnServerCore(stat0, stat1, r.ServerCPU, r.Elapsed)
				all[sc][s] = append(all[sc][s], r)
				fmt.Printf("# rep %d/%d  %-9s %-10s %9.0f ops/s  p50 %8s  p99 %8s  server CPU %6.1fµs/op (busy %3.0f%%)  generator CPU %6.1fµs/op (busy %3.0f%%)  allocs %5.0f/op  others on server CPU %3.0f%%  errors %d\n",
					rep+1, cfg.reps, sc, s, r.OpsPerSec(), fmtDur(r.Hist.quantile(0.50)), fmtDur(r.Hist.quantile(0.99)),
					r.cpuPerOp(r.ServerCPU), r.busy(r.ServerCPU), r.cpuPerOp(r.ClientCPU), r.busy(r.ClientCPU), r.allocsPerOp(), r.Others, r.Errors)
				for _, e := range r.FirstErrors {
					fmt.Printf("#   error: %s\n", e)
				}
			}
		}
	}
	if cmdErr != nil {
		return false, cmdErr
	}
	if cfg.profile != "" {
		for _, sc := range cfg.scenarios {
			for _, s := range serversFor(cfg, sc) {
				if !slices.Contains(cfg.profServers, baseName(s)) {
					continue
				}
				path := cfg.profile + "-" + sc + ".pprof"
				if baseName(s) != "baton" {
					path = cfg.profile + "-" + sc + "-" + baseName(s) + ".pprof"
				}
				if err := c.do("write " + sc + "/" + s + " " + path); err != nil {
					return false, err
				}
				fmt.Printf("# CPU profile of %s, %s: %s\n", s, sc, path)
			}
		}
	}
	var mem []memRow
	if cfg.memorySessions > 0 {
		if mem, err = measureLegacyMemory(c, urls, cfg); err != nil {
			return false, err
		}
	}
	ok := report(cfg, all)
	reportLegacyMemory(mem, cfg.memorySessions)
	return ok, nil
}

// serversFor is the servers measured in scenario sc: all of them in echo
// and confirm; Baton (net/http) alone in the rounds scenario, and beside
// the floor (carried_floor.go) in the carried scenario.
func serversFor(cfg config, sc string) []string {
	if legacyScenario(sc) {
		return legacyServersFor(cfg)
	}
	if _, _, isCarried := carriedOf(sc); isCarried {
		var out []string
		for _, s := range []string{"baton", "floor"} {
			if slices.Contains(cfg.servers, s) {
				out = append(out, s)
			}
		}
		return out
	}
	if _, isRounds := roundsN(sc); isRounds {
		if slices.Contains(cfg.servers, "baton") {
			return []string{"baton"}
		}
		return nil
	}
	return cfg.servers
}

// summary is the median of one server's repetitions in one scenario.
type summary struct {
	ops, p50, p99 float64
	min, max      float64
	srvCPU        float64 // µs of server-process CPU per operation (median)
	srvBusy       float64 // server-process CPU / wall time, % (median)
	cliCPU        float64 // µs of load-generator CPU per operation (median)
	cliBusy       float64
	allocs, bytes float64 // server-process allocations per operation (median)
	others        float64 // % of the window the server's CPU did other work (median; -1 unknown)
	errors        uint64
	stateLen      int64
	firstState    int64
	n             int
}

func summarize(rs []*result) *summary {
	if len(rs) == 0 {
		return nil
	}
	var ops, p50, p99, cpu, busy, ccpu, cbusy, allocs, bytes, others []float64
	s := &summary{n: len(rs)}
	for _, r := range rs {
		ops = append(ops, r.OpsPerSec())
		cpu = append(cpu, r.cpuPerOp(r.ServerCPU))
		busy = append(busy, r.busy(r.ServerCPU))
		ccpu = append(ccpu, r.cpuPerOp(r.ClientCPU))
		cbusy = append(cbusy, r.busy(r.ClientCPU))
		allocs = append(allocs, r.allocsPerOp())
		bytes = append(bytes, r.perOp(float64(r.ServerAllocBytes)))
		others = append(others, r.Others)
		p50 = append(p50, float64(r.Hist.quantile(0.50)))
		p99 = append(p99, float64(r.Hist.quantile(0.99)))
		s.errors += r.Errors
		if r.Ops == 0 {
			s.errors++ // nothing measured is not a valid run either
		}
		s.stateLen = max(s.stateLen, r.StateLen)
		s.firstState = max(s.firstState, r.FirstStateLen)
	}
	s.ops, s.p50, s.p99, s.srvCPU = median(ops), median(p50), median(p99), median(cpu)
	s.srvBusy, s.cliCPU, s.cliBusy = median(busy), median(ccpu), median(cbusy)
	s.allocs, s.bytes, s.others = median(allocs), median(bytes), median(others)
	s.min, s.max = slices.Min(ops), slices.Max(ops)
	return s
}

// bound says which side limited a measurement: with the processes
// pinned, "server" when the server's core was (nearly) saturated,
// "GENERATOR" when the generator's was and the server's was not (then the
// ops/s say nothing about the server), "others" when other work took the
// server's core (another process, the hypervisor), otherwise "-".
func (s *summary) bound() string {
	switch {
	case s.srvBusy >= 90:
		return "server"
	case s.cliBusy >= 90:
		return "GENERATOR"
	case s.others >= 10:
		return "others"
	}
	return "–"
}

func fmtOthers(v float64) string {
	if v < 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", v)
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
	var rounds []int
	var carried []string
	for _, sc := range cfg.scenarios {
		sum[sc] = map[string]*summary{}
		for _, s := range serversFor(cfg, sc) {
			m := summarize(all[sc][s])
			sum[sc][s] = m
			if m.errors > 0 {
				valid = false
			}
		}
		if n, ok := roundsN(sc); ok {
			rounds = append(rounds, n)
			continue
		}
		if _, _, ok := carriedOf(sc); ok {
			carried = append(carried, sc)
			continue
		}
		if legacyScenario(sc) {
			continue // reportLegacy
		}
		fmt.Printf("\n## %s\n\n", scenarioTitle[sc])
		fmt.Println("| server | ops/s (median) | min–max ops/s | p50 | p99 | server CPU/op | server busy | others on server CPU | generator CPU/op | generator busy | bound by | allocs/op | alloc KiB/op | state bytes | errors |")
		fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
		for _, s := range cfg.servers {
			m := sum[sc][s]
			state := "–"
			if sc == "confirm" {
				state = fmt.Sprint(m.stateLen)
			}
			errs := fmt.Sprint(m.errors)
			if m.errors > 0 {
				errs += " INVALID"
			}
			fmt.Printf("| %s | %.0f | %.0f–%.0f | %s | %s | %.1fµs | %.0f%% | %s | %.1fµs | %.0f%% | %s | %.0f | %.1f | %s | %s |\n", s, m.ops, m.min, m.max,
				fmtDur(time.Duration(m.p50)), fmtDur(time.Duration(m.p99)), m.srvCPU, m.srvBusy, fmtOthers(m.others), m.cliCPU, m.cliBusy, m.bound(),
				m.allocs, m.bytes/1024, state, errs)
		}
	}
	if len(rounds) > 0 {
		reportRounds(rounds, sum)
	}
	if len(carried) > 0 {
		reportCarried(carried, sum) // carried.go
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
			// Issue 23's targets: the plain call ≥ 0.95× the floor's
			// request, the two-round flow ≥ 0.85× the floor's flow (its two
			// bare requests through the same generator).
			target{b + "/floor (a)", "echo", b, "echo", "floor", 0.95},
			target{b + "/gosdk (a)", "echo", b, "echo", "gosdk", 4},
			target{b + "/mcpgo (a)", "echo", b, "echo", "mcpgo", 4},
			target{b + "-flow/floor-flow (b)", "confirm", b, "confirm", "floor", 0.85},
			target{b + "-flow/gosdk-flow (b)", "confirm", b, "confirm", "gosdk", 4},
			target{b + "-flow/mcpgo-flow (b)", "confirm", b, "confirm", "mcpgo", 4},
		)
	}
	if len(sum["echo"])+len(sum["confirm"]) > 0 {
		fmt.Printf("\n## Ratios\n\nops/s = ratio of the ops/s medians (the verdict); paired = median (min–max) of the per-repetition ratios; " +
			"CPU = the same ratio computed from server CPU per operation (denominator's CPU/op over numerator's): what the ratio would be if each server had the whole machine and the generator cost nothing.\n\n")
		fmt.Printf("| ratio | ops/s | paired | CPU | target | verdict (ops/s) | verdict (CPU) | note |\n|---|---:|---:|---:|---:|---|---|---|\n")
	}
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
		v, vc := n.ops/d.ops, d.srvCPU/n.srvCPU
		verdict, verdictCPU := "MISS", "MISS"
		if v >= t.min {
			verdict = "PASS"
		}
		if vc >= t.min {
			verdictCPU = "PASS"
		}
		if n.errors > 0 || d.errors > 0 {
			verdict, verdictCPU = "INVALID (errors)", "INVALID (errors)"
		}
		note := ""
		if n.bound() != "server" || d.bound() != "server" {
			note = fmt.Sprintf("bound by: %s %s, %s %s", t.num, n.bound(), t.den, d.bound())
		}
		fmt.Printf("| %s | %.2f | %.2f (%.2f–%.2f) | %.2f | ≥ %.2f | %s | %s | %s |\n", t.label, v,
			median(paired), slices.Min(paired), slices.Max(paired), vc, t.min, verdict, verdictCPU, note)
	}
	if b, f := sum["confirm"]["baton"], sum["echo"]["floor"]; b != nil && f != nil {
		fmt.Printf("| baton-flow/floor-single-request (info) | %.2f | | %.2f | – | – | – | |\n", b.ops/f.ops, f.srvCPU/b.srvCPU)
	}
	if b, f := sum["confirm"]["baton"], sum["echo"]["baton"]; b != nil && f != nil {
		fmt.Printf("| baton-flow/baton-single-request (info) | %.2f | | %.2f | – | – | – | |\n", b.ops/f.ops, f.srvCPU/b.srvCPU)
	}
	reportLegacy(cfg, all, sum)
	reportVariants(sum) // variants.go
	if !valid {
		fmt.Println("\nINVALID: some measurements had errors (see the # lines above); these figures must not be reported.")
	}
	return valid
}

// reportRounds prints the rounds-growth table: Baton asking n questions in
// sequence, one flow (n input_required rounds and the final one) per
// operation.
func reportRounds(rounds []int, sum map[string]map[string]*summary) {
	fmt.Printf("\n## (c) rounds: Baton asking n questions in sequence (n+1 requests per flow)\n\n")
	fmt.Println("| n | flows/s | requests/s | server CPU/flow | server CPU/request | allocs/flow | allocs/request | state bytes, round 1 → round n | state growth/round | others on server CPU | bound by | errors |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|")
	for _, n := range rounds {
		m := sum[roundsScenario(n)]["baton"]
		if m == nil {
			continue
		}
		req := float64(n + 1)
		growth := "–"
		if n > 1 {
			growth = fmt.Sprintf("%.0f", float64(m.stateLen-m.firstState)/float64(n-1))
		}
		errs := fmt.Sprint(m.errors)
		if m.errors > 0 {
			errs += " INVALID"
		}
		fmt.Printf("| %d | %.0f | %.0f | %.1fµs | %.1fµs | %.0f | %.1f | %d → %d | %s | %s | %s | %s |\n", n, m.ops, m.ops*req,
			m.srvCPU, m.srvCPU/req, m.allocs, m.allocs/req, m.firstState, m.stateLen, growth, fmtOthers(m.others), m.bound(), errs)
	}
}

func printEnvironment(cfg config) {
	printMachine()
	pinned := "not pinned (server and generator share every CPU)"
	if os.Getenv(pinnedEnv) != "" {
		pinned = "pinned: server process on CPU 0, load generator on CPU 1 (GOMAXPROCS 1 each)"
	}
	load := "unknown"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	fmt.Printf("# concurrency %d, warmup %s + duration %s per measurement, %d interleaved reps; servers %s; scenarios %s; generator %s (full decode every %d-th response); %s; load average %s\n",
		cfg.concurrency, cfg.warmup, cfg.duration, cfg.reps, strings.Join(cfg.servers, ","), strings.Join(cfg.scenarios, ","),
		cfg.generator, cfg.fullEvery, pinned, load)
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
