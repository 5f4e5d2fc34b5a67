//go:build linux

package fleet_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// The keys of the rotations: K1 signs first, then K2, then K3.
const (
	keyOne   = "fleet-rotation-key-one-0123456789abcdef"
	keyTwo   = "fleet-rotation-key-two-fedcba9876543210"
	keyThree = "fleet-rotation-key-three-00112233445566"
)

// keyID is the ID examples/everything derives for a key: "k-" and the first
// 6 bytes of its SHA-256 in hex. The instances' startup log is checked
// against it.
func keyID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return "k-" + hex.EncodeToString(sum[:6])
}

// nginxBinary returns nginx's path, or "" when it is not installed.
// BATON_NGINX, when set (.ci/run sets it), must name it.
func nginxBinary() (string, error) {
	if p := os.Getenv("BATON_NGINX"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("BATON_NGINX=%s: %w", p, err)
		}
		return p, nil
	}
	if p, err := exec.LookPath("nginx"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx", nil
	}
	return "", nil
}

func requireNginx(t *testing.T) string {
	t.Helper()
	p, err := nginxBinary()
	if err != nil {
		t.Fatal(err)
	}
	if p == "" {
		t.Skip("nginx not found: apt-get install nginx (Debian's package; .ci/run installs it), or set BATON_NGINX to its path")
	}
	return p
}

// logBuffer collects a process's output.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proc is a process the test started, in a process group of its own, sent
// SIGTERM should the test process die first.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  *logBuffer
	done chan struct{}
}

func startProc(name string, env []string, path string, args ...string) (*proc, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = env
	log := &logBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, and SIGKILL if it is still there
// after the grace period.
func (p *proc) stop(grace time.Duration) {
	if p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// baseEnv is the test's environment without the example server's own
// variables, which each process is given explicitly.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "BATON_STATE_KEY") || name == "BATON_REDIS_URL" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// buildEverything builds examples/everything into dir, with the race
// detector when the test has it.
func buildEverything(t *testing.T, dir string) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not found on PATH: %v", err)
	}
	bin := filepath.Join(dir, "everything")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	args = append(args, "github.com/baton-mcp/baton/examples/everything")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return bin
}

// instance is one examples/everything process of the fleet.
type instance struct {
	addr string // 127.0.0.1:PORT
	p    *proc
}

var (
	servingRE = regexp.MustCompile(`msg="serving MCP" url=http://([0-9.:]+)/mcp`)
	keysRE    = regexp.MustCompile(`msg="requestState keys" signing=(\S+) verifying=(\S+)`)
)

// fleet is three instances behind one nginx, all on loopback, sharing one
// Redis ledger.
type fleet struct {
	t     *testing.T
	dir   string
	bin   string
	redis *testredis.Server
	// cluster, when set, is the Redis Cluster the instances use instead
	// (BATON_REDIS_CLUSTER; fault_cluster_test.go).
	cluster *testredis.Cluster
	nginx   *proc
	inst    [3]*instance
	front   string   // http://127.0.0.1:PORT/mcp
	env     []string // more environment for the instances
	port    int      // the front's port, when chosen before nginx starts
}

// newFleet starts a private redis-server (skipping the test, saying how
// to get it, when it is not installed), three instances given it as
// BATON_REDIS_URL, and nginx in front of them.
func newFleet(t *testing.T, nginxBin, key, old string) *fleet {
	t.Helper()
	// Redis keeps an append-only file, as run.sh and docs/deployment.md ask:
	// the fault tests kill and restart it.
	f := &fleet{t: t, dir: t.TempDir(), redis: testredis.StartWith(t, testredis.Config{AppendOnly: true})}
	f.launch(nginxBin, key, old)
	return f
}

// launch builds the example, starts the three instances and nginx.
func (f *fleet) launch(nginxBin, key, old string) {
	t := f.t
	t.Helper()
	f.bin = buildEverything(t, f.dir)
	for i := range f.inst {
		f.inst[i] = f.startInstance(i, "127.0.0.1:0", key, old)
	}
	t.Cleanup(func() {
		for _, in := range f.inst {
			if in != nil {
				in.p.stop(10 * time.Second)
			}
		}
		for i, in := range f.inst {
			if in != nil && (strings.Contains(in.p.log.String(), "DATA RACE") || strings.Contains(in.p.log.String(), "panic:")) {
				t.Errorf("instance %d (%s):\n%s", i, in.addr, in.p.log.String())
			}
		}
	})
	f.startNginx(nginxBin)
}

// startInstance starts instance i on addr with the given keys and waits
// until it listens; it checks the key IDs it logs.
func (f *fleet) startInstance(i int, addr, key, old string) *instance {
	t := f.t
	t.Helper()
	env := append(baseEnv(), "BATON_STATE_KEY="+key, "BATON_STATE_KEYS_OLD="+old)
	if f.cluster != nil {
		env = append(env, "BATON_REDIS_CLUSTER="+strings.Join(f.cluster.Addrs, ","))
	} else {
		env = append(env, "BATON_REDIS_URL=unix://"+f.redis.Socket)
	}
	env = append(env, f.env...)
	if raceBuild && os.Getenv("GORACE") == "" {
		// The race runtime waits a second at exit by default; restarts
		// need not.
		env = append(env, "GORACE=atexit_sleep_ms=50")
	}
	p, err := startProc(fmt.Sprintf("instance %d", i), env, f.bin, "-addr", addr, "-state-ttl", "5m", "-task-lease", taskLease.String(), "-trusted-proxy", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingRE.FindStringSubmatch(p.log.String()); m != nil {
			addr = m[1]
			break
		}
		if p.exited() || time.Now().After(deadline) {
			p.stop(time.Second)
			t.Fatalf("instance %d did not start on %s:\n%s", i, addr, p.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	want := []string{keyID(key)}
	for _, k := range strings.Split(old, ",") {
		if k != "" {
			want = append(want, keyID(k))
		}
	}
	m := keysRE.FindStringSubmatch(p.log.String())
	if m == nil || m[1] != want[0] || m[2] != strings.Join(want, ",") {
		t.Fatalf("instance %d logs keys %q, want signing %s, verifying %s", i, m, want[0], strings.Join(want, ","))
	}
	return &instance{addr: addr, p: p}
}

// restart stops instance i and starts it again on the same address with
// new keys. nginx keeps running.
func (f *fleet) restart(i int, key, old string) {
	f.t.Helper()
	in := f.inst[i]
	in.p.stop(10 * time.Second)
	if log := in.p.log.String(); strings.Contains(log, "DATA RACE") || strings.Contains(log, "panic:") {
		f.t.Errorf("instance %d before its restart:\n%s", i, log)
	}
	f.inst[i] = f.startInstance(i, in.addr, key, old)
}

func (f *fleet) addrs() []string {
	var a []string
	for _, in := range f.inst {
		a = append(a, in.addr)
	}
	return a
}

// startNginx renders nginx.conf.in for the three instances and a free
// front port, starts nginx in the foreground and waits until it proxies.
func (f *fleet) startNginx(nginxBin string) {
	t := f.t
	t.Helper()
	tmpl, err := os.ReadFile("nginx.conf.in")
	if err != nil {
		t.Fatal(err)
	}
	userDirective := ""
	if os.Geteuid() == 0 {
		u, err := user.Current()
		if err != nil {
			t.Fatal(err)
		}
		g, err := user.LookupGroupId(u.Gid)
		if err != nil {
			t.Fatal(err)
		}
		userDirective = "user " + u.Username + " " + g.Name + ";"
	}
	prefix := filepath.Join(f.dir, "nginx")
	if err := os.Mkdir(prefix, 0o755); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; ; attempt++ {
		port := f.port
		if port == 0 {
			port = freePort(t)
		}
		listen := "127.0.0.1:" + strconv.Itoa(port)
		conf := strings.NewReplacer(
			"@USER@", userDirective,
			"@PREFIX@", prefix,
			"@LISTEN@", listen,
			"@UPSTREAM1@", f.inst[0].addr,
			"@UPSTREAM2@", f.inst[1].addr,
			"@UPSTREAM3@", f.inst[2].addr,
		).Replace(string(tmpl))
		confPath := filepath.Join(prefix, "nginx.conf")
		if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := startProc("nginx", baseEnv(), nginxBin, "-p", prefix, "-c", confPath, "-e", filepath.Join(prefix, "error.log"))
		if err != nil {
			t.Fatal(err)
		}
		f.front = "http://" + listen + "/mcp"
		if f.waitFront(p) {
			f.nginx = p
			t.Cleanup(func() {
				p.stop(10 * time.Second)
				if b, err := os.ReadFile(filepath.Join(prefix, "error.log")); err == nil && len(b) > 0 {
					t.Logf("nginx error.log:\n%s", b)
				}
			})
			return
		}
		p.stop(5 * time.Second)
		errLog, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
		if attempt == 3 || !bytes.Contains(errLog, []byte("in use")) {
			t.Fatalf("nginx did not start on %s:\n%s\n%s", listen, p.log.String(), errLog)
		}
		_ = os.Remove(filepath.Join(prefix, "error.log"))
	}
}

// waitFront waits until nginx answers on the front with an upstream's
// response.
func (f *fleet) waitFront(p *proc) bool {
	c := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) && !p.exited() {
		resp, err := c.Get(f.front)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.Header.Get("X-Upstream") != "" {
				return true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// reply is one answer to a tools/call.
type reply struct {
	status   int
	upstream string // nginx's X-Upstream: the instance that answered
	result   map[string]json.RawMessage
	err      *rpcError
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var httpClient = &http.Client{
	Timeout:   20 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second},
}

// callTool sends a 2026-07-28 tools/call through mcptest, declaring
// elicitation, with the retry fields when state is set: one round, which
// the flows step through themselves (a round may go to any instance, and
// some tests replay one).
func callTool(ctx context.Context, url, tool string, args map[string]any, state string, responses map[string]any) (*reply, error) {
	var opts []mcptest.CallOption
	if state != "" {
		opts = append(opts, mcptest.Resume(state, responses))
	}
	return post(ctx, url, "tools/call", map[string]any{"name": tool, "arguments": args},
		&mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}, opts...)
}

// post sends one 2026-07-28 request through mcptest, declaring caps, and
// returns its reply (a JSON-RPC error is r.err, not an error).
func post(ctx context.Context, url, method string, params map[string]any, caps *mcp.ClientCapabilities, opts ...mcptest.CallOption) (*reply, error) {
	c, err := mcptest.New(mcptest.URL(url, httpClient), &mcptest.Options{Capabilities: caps})
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(ctx, method, params, opts...)
	if err != nil {
		return nil, err
	}
	r := &reply{status: resp.Status, upstream: resp.Header.Get("X-Upstream")}
	switch {
	case resp.Error != nil:
		r.err = &rpcError{Code: resp.Error.Code, Message: resp.Error.Message}
	case resp.Result == nil:
		return nil, fmt.Errorf("status %d from %s: %w", resp.Status, r.upstream, resp.Err())
	default:
		if err := json.Unmarshal(resp.Result, &r.result); err != nil {
			return nil, fmt.Errorf("status %d from %s: %w", resp.Status, r.upstream, err)
		}
	}
	return r, nil
}

// question is one round's question and the answer the flow gives.
type question struct {
	key     string // the inputRequests key
	message string // a part of the form's message
	field   string
	value   any
}

// flow is one multi-round MRTR flow and how far it went.
type flow struct {
	id   int
	tool string
	args map[string]any
	asks []question
	want string

	rounds    int    // rounds done
	state     string // the last requestState
	answers   map[string]any
	upstreams []string // per round, the instance that answered
	kids      []string // per input_required round, the kid of its state
}

// newFlow returns flow i: onboard_user, confirm_transfer and
// test_input_required_result_multi_round in turn, with answers of its own.
func newFlow(i int) *flow {
	switch i % 3 {
	case 0:
		name, email := fmt.Sprintf("User%d", i), fmt.Sprintf("user%d@example.com", i)
		return &flow{id: i, tool: "onboard_user", args: map[string]any{},
			asks: []question{
				{"baton:0", "What is your name?", "name", name},
				// The second question quotes the first answer, which only
				// the requestState carried to this round's instance.
				{"baton:1", "Thanks, " + name + ". What is your email?", "email", email},
			},
			want: fmt.Sprintf("Welcome aboard, %s <%s>", name, email)}
	case 1:
		to, amount := fmt.Sprintf("payee-%d", i), float64(i)+0.25
		a := strconv.FormatFloat(amount, 'f', -1, 64)
		return &flow{id: i, tool: "confirm_transfer", args: map[string]any{"to": to, "amount": amount},
			asks: []question{{"confirm", "Transfer " + a + " to " + to + "?", "confirm", true}},
			want: "Transferred " + a + " to " + to}
	default:
		name, color := fmt.Sprintf("Name%d", i), fmt.Sprintf("color%d", i)
		return &flow{id: i, tool: "test_input_required_result_multi_round", args: map[string]any{},
			asks: []question{
				{"user_name", "Step 1: What is your name?", "name", name},
				{"favorite_color", "Step 2: What is your favorite color?", "color", color},
			},
			want: name + " likes " + color}
	}
}

// fork returns a copy of the flow that goes on independently.
func (f *flow) fork() *flow {
	c := *f
	c.upstreams, c.kids = slices.Clone(f.upstreams), slices.Clone(f.kids)
	return &c
}

func (f *flow) done() bool { return f.rounds == len(f.asks)+1 }

func (f *flow) String() string {
	return fmt.Sprintf("flow %d (%s, round %d of %d)", f.id, f.tool, f.rounds+1, len(f.asks)+1)
}

// step plays the flow's next round against url and checks the answer.
func (f *flow) step(ctx context.Context, url string) error {
	r, err := callTool(ctx, url, f.tool, f.args, f.state, f.answers)
	if err != nil {
		return fmt.Errorf("%v: %w", f, err)
	}
	f.upstreams = append(f.upstreams, r.upstream)
	if r.err != nil {
		return fmt.Errorf("%v on %s: error %d: %s", f, r.upstream, r.err.Code, r.err.Message)
	}
	if f.rounds < len(f.asks) {
		q := f.asks[f.rounds]
		var res struct {
			ResultType    string `json:"resultType"`
			InputRequests map[string]struct {
				Method string `json:"method"`
				Params struct {
					Message string `json:"message"`
				} `json:"params"`
			} `json:"inputRequests"`
			RequestState string `json:"requestState"`
		}
		if err := remarshal(r.result, &res); err != nil {
			return fmt.Errorf("%v: %w", f, err)
		}
		asked, ok := res.InputRequests[q.key]
		if res.ResultType != "input_required" || len(res.InputRequests) != 1 || !ok || res.RequestState == "" {
			return fmt.Errorf("%v on %s: want input_required asking %q only, got %s", f, r.upstream, q.key, mustJSON(r.result))
		}
		if asked.Method != "elicitation/create" || !strings.Contains(asked.Params.Message, q.message) {
			return fmt.Errorf("%v on %s: asked %s %q, want elicitation/create %q", f, r.upstream, asked.Method, asked.Params.Message, q.message)
		}
		f.state = res.RequestState
		f.kids = append(f.kids, stateKID(res.RequestState))
		f.answers = map[string]any{q.key: map[string]any{"action": "accept", "content": map[string]any{q.field: q.value}}}
		f.rounds++
		return nil
	}
	var res struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := remarshal(r.result, &res); err != nil {
		return fmt.Errorf("%v: %w", f, err)
	}
	if res.ResultType != "complete" || res.IsError || len(res.Content) != 1 || res.Content[0].Text != f.want {
		return fmt.Errorf("%v on %s: got %s, want the text %q", f, r.upstream, mustJSON(r.result), f.want)
	}
	f.rounds++
	return nil
}

// resultText returns the text and isError of a complete tools/call result.
func resultText(r *reply) (string, bool, error) {
	if r.err != nil {
		return "", false, fmt.Errorf("error %d: %s", r.err.Code, r.err.Message)
	}
	var res struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := remarshal(r.result, &res); err != nil {
		return "", false, err
	}
	if res.ResultType != "complete" || len(res.Content) != 1 {
		return "", false, fmt.Errorf("not a complete result with one text: %s", mustJSON(r.result))
	}
	return res.Content[0].Text, res.IsError, nil
}

func sum[K comparable](m map[K]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func remarshal(in map[string]json.RawMessage, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// stateKID returns the "kid" of a requestState's JWT header, or "".
func stateKID(state string) string {
	head, _, _ := strings.Cut(state, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		return ""
	}
	var h struct {
		Kid string `json:"kid"`
	}
	_ = json.Unmarshal(raw, &h)
	return h.Kid
}

// parallel runs do for every flow on the given number of workers and
// returns the errors.
func parallel(flows []*flow, workers int, do func(*flow) error) []error {
	jobs := make(chan *flow)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for f := range jobs {
				if err := do(f); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	for _, f := range flows {
		jobs <- f
	}
	close(jobs)
	wg.Wait()
	return errs
}

// untilDone plays a flow's remaining rounds.
func untilDone(ctx context.Context, url string) func(*flow) error {
	return func(f *flow) error {
		for !f.done() {
			if err := f.step(ctx, url); err != nil {
				return err
			}
		}
		return nil
	}
}

// distribution counts the rounds each instance answered and the flows by
// the number of instances their rounds landed on.
func distribution(t *testing.T, flows []*flow, addrs []string) (perUpstream map[string]int, bySpread map[int]int) {
	t.Helper()
	perUpstream, bySpread = map[string]int{}, map[int]int{}
	for _, f := range flows {
		seen := map[string]bool{}
		for i, u := range f.upstreams {
			if !slices.Contains(addrs, u) {
				t.Errorf("flow %d round %d: X-Upstream %q is not one instance of %v (a retry on another upstream?)", f.id, i+1, u, addrs)
			}
			perUpstream[u]++
			seen[u] = true
		}
		bySpread[len(seen)]++
	}
	return perUpstream, bySpread
}

func formatCounts[K comparable](m map[K]int) string {
	var parts []string
	for k, v := range m {
		parts = append(parts, fmt.Sprintf("%v: %d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// TestFleet starts three instances sharing a key behind nginx
// (round-robin, no stickiness), runs many multi-round flows through it
// concurrently, then rotates the key while flows are in flight.
func TestFleet(t *testing.T) {
	nginxBin := requireNginx(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	start := time.Now()
	fl := newFleet(t, nginxBin, keyOne, "")
	addrs := fl.addrs()
	t.Logf("fleet up in %v: nginx %s -> %v", time.Since(start).Round(time.Millisecond), fl.front, addrs)

	t.Run("concurrent flows", func(t *testing.T) {
		const n, workers = 60, 8
		flows := make([]*flow, n)
		for i := range flows {
			flows[i] = newFlow(i)
		}
		began := time.Now()
		for _, err := range parallel(flows, workers, untilDone(ctx, fl.front)) {
			t.Error(err)
		}
		elapsed := time.Since(began)
		rounds := 0
		for _, f := range flows {
			if !f.done() {
				t.Errorf("%v did not finish", f)
			}
			rounds += len(f.upstreams)
			for _, k := range f.kids {
				if k != keyID(keyOne) {
					t.Errorf("flow %d: state signed by %q, want %q", f.id, k, keyID(keyOne))
				}
			}
		}
		perUpstream, bySpread := distribution(t, flows, addrs)
		t.Logf("%d flows (%d rounds) on %d workers in %v; rounds per upstream {%s}; flows by instances used {%s}",
			n, rounds, workers, elapsed.Round(time.Millisecond), formatCounts(perUpstream), formatCounts(bySpread))
		for _, a := range addrs {
			if perUpstream[a] == 0 {
				t.Errorf("instance %s answered no round: nginx did not balance over all three", a)
			}
		}
		if bySpread[2]+bySpread[3] == 0 {
			t.Error("no flow had rounds on two different instances")
		}
	})

	// A client captures the confirmed retry of a confirm_transfer and
	// sends it again, and again, through nginx, so that every instance
	// receives it: the shared Redis ledger lets exactly one of them
	// transfer.
	t.Run("replayed confirmation", func(t *testing.T) {
		rdb := fl.redis.Client(t)
		keysBefore, err := rdb.Keys(ctx, "baton:redeemed:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		f := newFlow(1) // confirm_transfer
		if err := f.step(ctx, fl.front); err != nil {
			t.Fatal(err)
		}
		state, answers := f.state, f.answers // the captured retry
		var transferred []string
		refused := map[string]int{}
		for i := 0; i < 30 && (i < 4 || len(refused) < len(fl.inst)); i++ {
			r, err := callTool(ctx, fl.front, f.tool, f.args, state, answers)
			if err != nil {
				t.Fatal(err)
			}
			text, isError, err := resultText(r)
			switch {
			case err != nil:
				t.Fatalf("send %d on %s: %v", i+1, r.upstream, err)
			case !isError && text == f.want:
				transferred = append(transferred, r.upstream)
			case isError && strings.Contains(text, "already used"):
				refused[r.upstream]++
			default:
				t.Fatalf("send %d on %s: %q (isError %v)", i+1, r.upstream, text, isError)
			}
		}
		if len(transferred) != 1 {
			t.Fatalf("the confirmed retry transferred %d times (on %v), want exactly once", len(transferred), transferred)
		}
		for _, a := range fl.addrs() {
			if refused[a] == 0 {
				t.Errorf("instance %s never received the replay (refusals by instance: {%s})", a, formatCounts(refused))
			}
		}
		keysAfter, err := rdb.Keys(ctx, "baton:redeemed:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(keysAfter) != len(keysBefore)+1 {
			t.Errorf("Redis holds %d redemptions, was %d: want one more", len(keysAfter), len(keysBefore))
		}
		t.Logf("one confirmed retry sent %d times through nginx: transferred once (on %s), refused as already used {%s}",
			1+sum(refused), transferred[0], formatCounts(refused))
	})

	// Work that outlives one request, through nginx: tasks, and
	// 2025-11-25 sessions of the official TypeScript SDK; then an instance
	// killed in the middle of both (failover_test.go).
	t.Run("tasks through the balancer", func(t *testing.T) { testTasks(t, ctx, fl) })
	t.Run("legacy sessions through the balancer", func(t *testing.T) { testLegacySessions(t, ctx, fl) })
	t.Run("an instance killed mid-way", func(t *testing.T) { testKill(t, ctx, fl) })

	t.Run("key rotation mid-flight", func(t *testing.T) {
		const n, workers = 30, 8
		flows := make([]*flow, n)
		for i := range flows {
			flows[i] = newFlow(1000 + i)
		}
		began := time.Now()
		for _, err := range parallel(flows, workers, func(f *flow) error { return f.step(ctx, fl.front) }) {
			t.Error(err)
		}
		if t.Failed() {
			t.FailNow()
		}
		for _, f := range flows {
			if f.kids[0] != keyID(keyOne) {
				t.Fatalf("flow %d round 1: state signed by %q, want K1 %q", f.id, f.kids[0], keyID(keyOne))
			}
		}
		// A round-1 state under K1 and the answer to it, kept to show
		// below that an instance without K1 refuses it.
		var k1 *flow
		for _, f := range flows {
			if f.tool == "onboard_user" {
				k1 = f.fork()
				break
			}
		}

		// Rolling restart: the new key signs, the old one still verifies.
		// nginx keeps running and keeps the same upstream addresses.
		rs := time.Now()
		for i := range fl.inst {
			fl.restart(i, keyTwo, keyOne)
		}
		if fl.nginx.exited() {
			t.Fatalf("nginx exited during the restarts:\n%s", fl.nginx.log.String())
		}
		restartTime := time.Since(rs)

		for _, err := range parallel(flows, workers, untilDone(ctx, fl.front)) {
			t.Error(err)
		}
		rounds := 0
		for _, f := range flows {
			if !f.done() {
				t.Errorf("%v did not finish after the rotation", f)
			}
			rounds += len(f.upstreams)
			for r, k := range f.kids[1:] {
				if k != keyID(keyTwo) {
					t.Errorf("flow %d round %d: state signed by %q after the rotation, want K2 %q", f.id, r+2, k, keyID(keyTwo))
				}
			}
		}
		perUpstream, bySpread := distribution(t, flows, fl.addrs())
		t.Logf("%d flows begun under K1, %d instances restarted with K2 (K1 kept to verify) in %v, all finished: %d rounds in %v; rounds per upstream {%s}; flows by instances used {%s}",
			n, len(fl.inst), restartTime.Round(time.Millisecond), rounds, time.Since(began).Round(time.Millisecond), formatCounts(perUpstream), formatCounts(bySpread))

		// State signed by K2 on any instance verifies on every instance.
		for i, a := range fl.inst {
			f := newFlow(2000 + 3*i)
			if err := f.step(ctx, "http://"+a.addr+"/mcp"); err != nil {
				t.Fatal(err)
			}
			if f.kids[0] != keyID(keyTwo) {
				t.Fatalf("instance %d signs with %q, want K2 %q", i, f.kids[0], keyID(keyTwo))
			}
			for j, b := range fl.inst {
				g := f.fork()
				if err := g.step(ctx, "http://"+b.addr+"/mcp"); err != nil {
					t.Errorf("K2 state from instance %d on instance %d: %v", i, j, err)
				}
			}
		}

		// Dropping K1: an instance with K2 alone refuses K1 state with
		// -32602 and goes on serving; one that kept K1 still accepts it.
		fl.restart(0, keyTwo, "")
		r, err := callTool(ctx, "http://"+fl.inst[0].addr+"/mcp", k1.tool, k1.args, k1.state, k1.answers)
		if err != nil {
			t.Fatal(err)
		}
		if r.err == nil || r.err.Code != -32602 || !strings.Contains(r.err.Message, "requestState") {
			t.Fatalf("K1 state on an instance with K2 only: status %d, error %+v, result %s", r.status, r.err, mustJSON(r.result))
		}
		t.Logf("K1 state on the instance with K2 only: HTTP %d, error %d: %s", r.status, r.err.Code, r.err.Message)
		if fl.inst[0].p.exited() {
			t.Fatalf("instance 0 exited after refusing K1 state:\n%s", fl.inst[0].p.log.String())
		}
		if err := untilDone(ctx, "http://"+fl.inst[0].addr+"/mcp")(newFlow(3000)); err != nil {
			t.Fatalf("instance 0 after refusing K1 state: %v", err)
		}
		still := k1.fork()
		if err := still.step(ctx, "http://"+fl.inst[1].addr+"/mcp"); err != nil {
			t.Fatalf("K1 state on an instance that kept K1: %v", err)
		}
	})

	// With traffic between the restarts the fleet is mixed for a while, and
	// a round signed by a new key can land on an instance that does not
	// know it yet. Rotating in two phases avoids that: first every instance
	// learns the new key (to verify only), then every instance signs with
	// it. Here flows run through nginx after each of the six restarts.
	t.Run("two-phase rotation with traffic between restarts", func(t *testing.T) {
		const n, workers = 12, 8
		began := time.Now()
		phases := []struct{ key, old string }{
			{keyTwo, keyThree}, // K2 signs, K3 verifies (K1 dropped)
			{keyThree, keyTwo}, // K3 signs, K2 verifies
		}
		id, total := 4000, 0
		for p, ph := range phases {
			for i := range fl.inst {
				fl.restart(i, ph.key, ph.old)
				flows := make([]*flow, n)
				for j := range flows {
					flows[j] = newFlow(id)
					id++
				}
				for _, err := range parallel(flows, workers, untilDone(ctx, fl.front)) {
					t.Errorf("phase %d, after restarting instance %d: %v", p+1, i, err)
				}
				perUpstream, _ := distribution(t, flows, fl.addrs())
				if len(perUpstream) != len(fl.inst) {
					t.Errorf("phase %d, after restarting instance %d: rounds reached only %v", p+1, i, perUpstream)
				}
				total += n
			}
		}
		// Every instance now signs with K3.
		for i, in := range fl.inst {
			f := newFlow(id + i)
			if err := f.step(ctx, "http://"+in.addr+"/mcp"); err != nil || f.kids[0] != keyID(keyThree) {
				t.Errorf("instance %d after the rotation: %v, signed by %q, want K3 %q", i, err, f.kids, keyID(keyThree))
			}
		}
		t.Logf("two-phase rotation K2 -> K3: 6 restarts, %d flows through the mixed fleet, none refused, in %v", total, time.Since(began).Round(time.Millisecond))
	})
}

// TestRunScript runs examples/fleet/run.sh as a person would, plays one
// flow of each kind through the front it prints, replays the confirmed
// transfer, stops it with SIGTERM and checks that it stopped everything it
// started (the redis-server it starts included).
func TestRunScript(t *testing.T) {
	nginxBin := requireNginx(t)
	if testredis.Binary() == "" {
		t.Skip("redis-server not found: install Debian's package (apt-get install redis-server), or set BATON_REDIS_SERVER to its path")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	env := append(baseEnv(), "BATON_NGINX="+nginxBin, "BATON_STATE_KEY="+keyOne, "BATON_REDIS_SERVER="+testredis.Binary())
	p, err := startProc("run.sh", env, bash, "run.sh")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(10 * time.Second) })

	frontRE := regexp.MustCompile(`fleet: front (http://127\.0\.0\.1:[0-9]+/mcp)`)
	instRE := regexp.MustCompile(`fleet: instance \d at http://(127\.0\.0\.1:[0-9]+)/mcp`)
	confRE := regexp.MustCompile(`config (\S+)/nginx\.conf`)
	redisRE := regexp.MustCompile(`fleet: redis-server \(pid ([0-9]+)\) at unix://`)
	var front string
	deadline := time.Now().Add(4 * time.Minute)
	for front == "" {
		if m := frontRE.FindStringSubmatch(p.log.String()); m != nil {
			front = m[1]
		} else if p.exited() || time.Now().After(deadline) {
			t.Fatalf("run.sh printed no front URL:\n%s", p.log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := p.log.String()
	var addrs []string
	for _, m := range instRE.FindAllStringSubmatch(out, -1) {
		addrs = append(addrs, m[1])
	}
	work := confRE.FindStringSubmatch(out)
	redisPID := redisRE.FindStringSubmatch(out)
	if len(addrs) != 3 || work == nil || redisPID == nil {
		t.Fatalf("run.sh output:\n%s", out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	flows := []*flow{newFlow(0), newFlow(1), newFlow(2)}
	for _, err := range parallel(flows, 3, untilDone(ctx, front)) {
		t.Error(err)
	}
	perUpstream, _ := distribution(t, flows, addrs)
	t.Logf("run.sh: %s over %v; rounds per upstream {%s}", front, addrs, formatCounts(perUpstream))
	// The confirmed transfer again, on every instance in turn: refused.
	tr := flows[1]
	for i := range len(addrs) {
		r, err := callTool(ctx, front, tr.tool, tr.args, tr.state, tr.answers)
		if err != nil {
			t.Fatal(err)
		}
		if text, isError, err := resultText(r); err != nil || !isError || !strings.Contains(text, "already used") {
			t.Errorf("replay %d of the confirmed transfer on %s: %q, isError %v, %v", i+1, r.upstream, text, isError, err)
		}
	}

	// SIGTERM to the script alone: its trap stops the fleet.
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("run.sh did not stop on SIGTERM:\n%s", p.log.String())
	}
	for _, a := range append(addrs, strings.TrimSuffix(strings.TrimPrefix(front, "http://"), "/mcp")) {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			_ = c.Close()
			t.Errorf("%s still answers after run.sh stopped", a)
		}
	}
	if pid, _ := strconv.Atoi(redisPID[1]); syscall.Kill(pid, 0) == nil {
		t.Errorf("the redis-server run.sh started (pid %d) still runs", pid)
	}
	if _, err := os.Stat(work[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run.sh left %s behind (%v)", work[1], err)
	}
}
