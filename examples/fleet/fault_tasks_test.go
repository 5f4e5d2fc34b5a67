//go:build linux

package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcptest"
)

// The fault suite's rows for tasks, the store and shutdown (issue 18): Redis
// killed and paused under task work, a task flood from one client, and a
// rolling restart under load, on three instances behind nginx and a real
// redis-server with its append-only file.

// drainedRE reads how many tasks an instance waited for at shutdown.
var drainedRE = regexp.MustCompile(`waiting for the tasks running here" tasks=(\d+)`)

// storeBound is the longest a request may wait on a stalled Redis: the
// instances' StoreTimeout (the default, 5 s) plus slack
// for a loaded machine (nginx, the race detector).
const storeBound = 5*time.Second + 2*time.Second

// try is one request through the front and how it went.
type try struct {
	r   *reply
	err error // transport: no JSON-RPC answer (nginx's 502, a cut connection)
	dur time.Duration
}

func (t try) status() int {
	if t.r == nil {
		return 0
	}
	return t.r.status
}

// storeRefusal reports whether the answer is the clear refusal of a
// request that needed the store: 503, naming the store.
func (t try) storeRefusal() bool {
	return t.r != nil && t.r.status == 503 && t.r.err != nil && strings.Contains(t.r.err.Message, "store is unavailable")
}

func (t try) String() string {
	switch {
	case t.err != nil:
		return fmt.Sprintf("transport error after %v: %v", t.dur, t.err)
	case t.r.err != nil:
		return fmt.Sprintf("HTTP %d from %s after %v: error %d: %s", t.r.status, t.r.upstream, t.dur, t.r.err.Code, t.r.err.Message)
	}
	return fmt.Sprintf("HTTP %d from %s after %v", t.r.status, t.r.upstream, t.dur)
}

// do sends one tasks-capable request through url as client (an address
// nginx's trusted X-Forwarded-For carries to the instances; "" for the
// test's own).
func do(ctx context.Context, url, client, method string, params map[string]any) try {
	var opts []mcptest.CallOption
	if client != "" {
		opts = append(opts, mcptest.WithHeader("X-Forwarded-For", client))
	}
	start := time.Now()
	r, err := post(ctx, url, method, params, taskCaps, opts...)
	return try{r: r, err: err, dur: time.Since(start)}
}

// retrying sends the request until it gets an answer that is not a
// transport error or a 502/503 (a refusal that wrote nothing, or an
// instance going away), counting the retries; it gives up after 40.
func retrying(ctx context.Context, url, client, method string, params map[string]any, retries *atomic.Int64) try {
	for attempt := 0; ; attempt++ {
		t := do(ctx, url, client, method, params)
		if (t.err == nil && t.r.status != 502 && t.r.status != 503) || attempt == 40 || ctx.Err() != nil {
			return t
		}
		retries.Add(1)
		time.Sleep(100 * time.Millisecond)
	}
}

// taskOf reads a CreateTaskResult's id, or says what came instead.
func taskOf(t try, kind string) (*task, error) {
	if t.err != nil || t.r.err != nil {
		return nil, fmt.Errorf("create %s: %v", kind, t)
	}
	var res struct {
		ResultType string `json:"resultType"`
		TaskID     string `json:"taskId"`
	}
	if err := remarshal(t.r.result, &res); err != nil || res.ResultType != "task" {
		return nil, fmt.Errorf("create %s: want a task, got %s", kind, mustJSON(t.r.result))
	}
	return &task{kind: kind, id: res.TaskID, owner: t.r.upstream}, nil
}

// status reads a tasks/get answer: the status and the result's text, or
// the error's message.
func taskStatus(t try) (status, text string) {
	var st struct {
		Status string `json:"status"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = remarshal(t.r.result, &st)
	if st.Status == "failed" {
		return st.Status, st.Error.Message
	}
	return st.Status, taskText(t.r.result)
}

// settle polls the task through url (retrying through outages and
// restarts) until it is terminal, or in want.
func (tk *task) settle(ctx context.Context, url string, retries *atomic.Int64, want ...string) (status, text string, err error) {
	for {
		t := retrying(ctx, url, "", "tasks/get", map[string]any{"taskId": tk.id}, retries)
		if t.err != nil || t.r.err != nil {
			return "", "", fmt.Errorf("tasks/get %s: %v", tk.id, t)
		}
		status, text = taskStatus(t)
		for _, w := range want {
			if status == w {
				tk.final = t.r.result
				return status, text, nil
			}
		}
		if status != "working" && status != "input_required" {
			tk.final = t.r.result
			return status, text, nil
		}
		select {
		case <-ctx.Done():
			return status, text, fmt.Errorf("task %s still %s: %w", tk.id, status, ctx.Err())
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// confirmAll answers every question of an input_required task's tasks/get
// result with confirm: true, under the keys the task gave them.
func confirmAll(asked map[string]json.RawMessage) map[string]any {
	var irs map[string]json.RawMessage
	_ = json.Unmarshal(asked["inputRequests"], &irs)
	responses := map[string]any{}
	for key := range irs {
		responses[key] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	return responses
}

// rss returns the resident set size of instance i, in MiB.
func (f *fleet) rss(i int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", f.inst[i].p.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return -1
}

// gracefulRestart stops instance i with SIGTERM and waits for it to exit
// (its drain: running tasks and parked calls finish, listen streams
// close; SIGKILL after grace), starts it again on the same address and
// waits until nginx sends to it again. It returns how long the stop took
// and the instance's log before the restart. The rolling restarts of the
// fault suite use it, one instance after another.
func (f *fleet) gracefulRestart(ctx context.Context, i int, grace time.Duration) (time.Duration, string, error) {
	f.t.Helper()
	in := f.inst[i]
	start := time.Now()
	in.p.stop(grace)
	took := time.Since(start)
	log := in.p.log.String()
	if strings.Contains(log, "DATA RACE") || strings.Contains(log, "panic:") {
		f.t.Errorf("instance %d before its restart:\n%s", i, log)
	}
	f.inst[i] = f.startInstance(i, in.addr, keyOne, "")
	return took, log, f.waitServed(ctx)
}

func TestFleetFaults(t *testing.T) {
	nginxBin := requireNginx(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	began := time.Now()
	fl := newFleet(t, nginxBin, keyOne, "")
	t.Logf("fleet up in %v", time.Since(began).Round(time.Millisecond))
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for i, in := range fl.inst { // the instances' own account of the store
			var lines []string
			for _, l := range strings.Split(in.p.log.String(), "\n") {
				if strings.Contains(l, "store") || strings.Contains(l, "task:") || strings.Contains(l, "tasks:") {
					lines = append(lines, l)
				}
			}
			if len(lines) > 60 {
				lines = append(lines[:30], lines[len(lines)-30:]...)
			}
			t.Logf("instance %d (%s):\n%s", i, in.addr, strings.Join(lines, "\n"))
		}
	})
	t.Run("redis killed as tasks finish", func(t *testing.T) {
		testRedisKilled(t, ctx, fl, []time.Duration{time.Second, 5 * time.Second, 30 * time.Second})
	})
	t.Run("redis paused", func(t *testing.T) { testRedisPaused(t, ctx, fl) })
	t.Run("task flood from one client", func(t *testing.T) { testTaskFlood(t, ctx, fl) })
	t.Run("rolling restart under load", func(t *testing.T) { testRollingRestart(t, ctx, fl) })
	t.Run("rolling restart of 2025-11-25 SDK sessions", func(t *testing.T) { testRollingRestartTS(t, ctx, fl) })
	t.Logf("fault rows done in %v", time.Since(began).Round(time.Second))
}

// testRedisKilled kills Redis (on a cluster, one master) for each outage
// while tasks finish and one waits for an answer: no finished result is
// lost, no task fails, every request that needed Redis meanwhile gets a
// 503 naming the store, and the fleet recovers with no restart.
func testRedisKilled(t *testing.T, ctx context.Context, fl *fleet, outages []time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var retries atomic.Int64
	for _, outage := range outages {
		// Tasks that finish at a fifth, half and four fifths of the
		// outage, and one that asks a question answered after it.
		var compute []*task
		for _, frac := range []float64{0.2, 0.5, 0.8} {
			secs := 0.3 + frac*outage.Seconds()
			tk, err := taskOf(do(ctx, fl.front, "", "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": secs, "label": fmt.Sprint(frac)}}), "compute")
			if err != nil {
				t.Fatal(err)
			}
			compute = append(compute, tk)
		}
		question, err := taskOf(do(ctx, fl.front, "", "tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "kept.txt"}}), "confirm")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := question.settle(ctx, fl.front, &retries, "input_required"); err != nil {
			t.Fatal(err)
		}
		fl.killRedis()
		down := time.Now()
		// Requests that need Redis during the outage: tasks/get and task
		// creation, every 250 ms.
		var clear, unclear, other int
		var examples []string
		for time.Since(down) < outage {
			for _, tr := range []try{
				do(ctx, fl.front, "", "tasks/get", map[string]any{"taskId": compute[0].id}),
				do(ctx, fl.front, "", "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0}}),
			} {
				switch {
				case tr.storeRefusal():
					clear++
					if len(examples) == 0 {
						examples = append(examples, tr.String())
					}
				case tr.err == nil && tr.r.err == nil:
					other++ // answered from before the kill (a race with it)
				default:
					unclear++
					t.Errorf("outage %v: a request that needed Redis got %v, want 503 naming the store", outage, tr)
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
		fl.restartRedis(t)
		up := time.Now()
		// Recovery: the question is answered, every task completes.
		// (A request may still meet the instances' broken connections to
		// the old server: it gets the same 503, and is retried.)
		status, _, err := question.settle(ctx, fl.front, &retries, "input_required")
		if err == nil && status == "input_required" {
			if tr := retrying(ctx, fl.front, "", "tasks/update", map[string]any{"taskId": question.id, "inputResponses": confirmAll(question.final)}, &retries); tr.err != nil || tr.r.err != nil {
				err = fmt.Errorf("tasks/update: %v", tr)
			}
		}
		if err != nil {
			t.Errorf("outage %v: answering the question after it: %v", outage, err)
		}
		lost, failed := 0, 0
		for _, tk := range append(compute, question) {
			status, text, err := tk.settle(ctx, fl.front, &retries, "completed")
			switch {
			case err != nil:
				lost++
				t.Errorf("outage %v: task %s (%s): %v", outage, tk.id, tk.kind, err)
			case status == "failed":
				failed++
				t.Errorf("outage %v: task %s (%s) on a healthy instance failed: %s", outage, tk.id, tk.kind, text)
			case status != "completed" || text == "":
				lost++
				t.Errorf("outage %v: task %s (%s) is %s with %q: its result is lost", outage, tk.id, tk.kind, status, text)
			}
		}
		settled := time.Since(up)
		// A fresh task after the outage runs, on whichever instance.
		fresh, err := taskOf(retrying(ctx, fl.front, "", "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "after"}}, &retries), "compute")
		if err == nil {
			_, _, err = fresh.settle(ctx, fl.front, &retries, "completed")
		}
		if err != nil {
			t.Errorf("outage %v: a task after it: %v", outage, err)
		}
		t.Logf("%s killed for %v (restarted with its append-only file): %d tasks finishing or asking during it: %d results lost, %d failed; %d requests that needed Redis got 503 naming the store, %d another error (e.g. %s); %d answered from before the kill; all settled %v after the restart (%d requests retried after a 503 so far); a new task then completed (no instance restarted)",
			fl.redisName(), outage, len(compute)+1, lost, failed, clear, unclear, strings.Join(examples, ""), other, settled.Round(100*time.Millisecond), retries.Load())
	}
}

// testRedisPaused pauses Redis (SIGSTOP) for 10 s under requests (tasks,
// MRTR rounds, and 2025-11-25 sessions running onboard_user): none waits
// longer than the store bound; tasks finishing in the pause keep their
// results; a refused creation leaves no task behind; the sessions work
// again after it.
func testRedisPaused(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var retries atomic.Int64
	var finishing []*task
	for _, secs := range []float64{2, 5, 8} {
		tk, err := taskOf(do(ctx, fl.front, "", "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": secs, "label": "paused"}}), "compute")
		if err != nil {
			t.Fatal(err)
		}
		finishing = append(finishing, tk)
	}
	keysBefore, err := fl.redisKeys(ctx, t, "baton:tasks:task:*")
	if err != nil {
		t.Fatal(err)
	}
	legacy := startLegacyLoad(ctx, t, fl.front, 3)
	time.Sleep(500 * time.Millisecond) // flows under way when Redis stops
	fl.pauseRedis()
	paused := time.Now()
	const pause = 10 * time.Second
	var (
		mu       sync.Mutex
		longest  time.Duration
		slowest  string
		counts   = map[string]int{}
		accepted []*task
		wg       sync.WaitGroup
	)
	for w := range 4 {
		wg.Go(func() {
			for time.Since(paused) < pause {
				var tr try
				kind := []string{"tasks/get", "create", "mrtr round"}[w%3]
				switch kind {
				case "tasks/get":
					tr = do(ctx, fl.front, "", "tasks/get", map[string]any{"taskId": finishing[0].id})
				case "create":
					tr = do(ctx, fl.front, "", "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0}})
				default:
					r, err := callTool(ctx, fl.front, "onboard_user", map[string]any{}, "", nil)
					tr = try{r: r, err: err}
				}
				mu.Lock()
				if tr.dur > longest {
					longest, slowest = tr.dur, kind+": "+tr.String()
				}
				switch {
				case tr.storeRefusal():
					counts[kind+" refused (503, store)"]++
				case tr.err == nil && tr.r.err == nil:
					counts[kind+" answered"]++
					if kind == "create" {
						if tk, err := taskOf(tr, "compute"); err == nil {
							accepted = append(accepted, tk)
						}
					}
				default:
					counts[kind+" other error"]++
					t.Errorf("paused Redis: %s got %v", kind, tr)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fl.resumeRedis()
	if longest > storeBound {
		t.Errorf("a request waited %v on the paused Redis, over the bound %v: %s", longest, storeBound, slowest)
	}
	// The sessions recover: flows complete again after the pause.
	before := legacy.done.Load()
	for legacy.done.Load() < before+3 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	legacy.finish(ctx, t)
	if legacy.done.Load() < before+3 {
		t.Errorf("2025-11-25 sessions after the pause: %s", legacy)
	}
	if legacy.tr.longest > storeBound {
		t.Errorf("a 2025-11-25 request waited %v on the paused Redis, over the bound %v: %s", legacy.tr.longest, storeBound, legacy.tr.slowest)
	}
	lost := 0
	for _, tk := range append(finishing, accepted...) {
		if status, text, err := tk.settle(ctx, fl.front, &retries, "completed"); err != nil || status != "completed" {
			lost++
			t.Errorf("task %s finishing in the pause: %s %q %v", tk.id, status, text, err)
		}
	}
	// Nothing but the accepted tasks was written: the refused creations
	// left no record when Redis ran them on resuming.
	time.Sleep(time.Second)
	keysAfter, err := fl.redisKeys(ctx, t, "baton:tasks:task:*")
	if err != nil {
		t.Fatal(err)
	}
	if extra := len(keysAfter) - len(keysBefore) - len(accepted); extra != 0 {
		t.Errorf("%d task records written beyond the %d accepted during the pause: a refused request wrote", extra, len(accepted))
	}
	t.Logf("%s paused 10 s: longest request %v (bound: StoreTimeout 5 s + 2 s slack); %s; %d tasks finishing in the pause, %d results lost; task records after: %d new = the %d accepted; meanwhile %s",
		fl.redisName(), longest.Round(10*time.Millisecond), formatCounts(counts), len(finishing), lost, len(keysAfter)-len(keysBefore), len(accepted), legacy)
}

// testTaskFlood: one anonymous client creates long tasks as fast as it
// can; the per-client quota holds on each instance, the instances' memory
// stays bounded, and another client's tasks run as usual.
func testTaskFlood(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	const flooder, other = "198.51.100.7", "203.0.113.9"
	const attempts, workers = 1500, 8
	var rssBefore []float64
	for i := range fl.inst {
		rssBefore = append(rssBefore, fl.rss(i))
	}
	var (
		mu      sync.Mutex
		counts  = map[string]int{}
		created []*task
		next    atomic.Int64
		wg      sync.WaitGroup
	)
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= attempts {
				tr := do(ctx, fl.front, flooder, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 600, "label": "flood"}})
				mu.Lock()
				switch {
				case tr.err != nil:
					counts["transport error"]++
				case tr.r.err == nil:
					counts["accepted"]++
					if tk, err := taskOf(tr, "flood"); err == nil {
						created = append(created, tk)
					}
				case tr.r.status == 429 && tr.r.err.Code == -32600 && strings.Contains(tr.r.err.Message, "this client address has its limit of 32 running"):
					counts["429"]++
				default:
					counts[fmt.Sprintf("%d %d", tr.r.status, tr.r.err.Code)]++
				}
				mu.Unlock()
			}
		})
	}
	// Meanwhile another client's tasks run.
	var otherDone, otherFailed int
	var retries atomic.Int64
	for i := range 6 {
		tk, err := taskOf(do(ctx, fl.front, other, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0.2, "label": fmt.Sprint(i)}}), "other")
		if err == nil {
			var status string
			status, _, err = tk.settle(ctx, fl.front, &retries, "completed")
			if err == nil && status != "completed" {
				err = fmt.Errorf("task %s is %s", tk.id, status)
			}
		}
		if err != nil {
			otherFailed++
			t.Errorf("another client during the flood: %v", err)
			continue
		}
		otherDone++
	}
	wg.Wait()
	took := time.Since(start)
	var rssAfter []float64
	for i := range fl.inst {
		rssAfter = append(rssAfter, fl.rss(i))
	}
	if n := counts["accepted"]; n > 3*32 || n < 32 {
		t.Errorf("the flood got %d tasks accepted; want at most 3 instances x 32 (and the quota reached)", n)
	}
	if counts["accepted"]+counts["429"] != attempts {
		t.Errorf("flood outcomes %s, want only acceptances and 429s naming the client's quota", formatCounts(counts))
	}
	for i := range fl.inst {
		if rssAfter[i]-rssBefore[i] > 64 {
			t.Errorf("instance %d grew from %.1f to %.1f MiB under the flood", i, rssBefore[i], rssAfter[i])
		}
	}
	// Clean up: cancel the flood's tasks.
	for _, tk := range created {
		if tr := retrying(ctx, fl.front, flooder, "tasks/cancel", map[string]any{"taskId": tk.id}, &retries); tr.err != nil || tr.r.err != nil {
			t.Errorf("cancel %s: %v", tk.id, tr)
		}
	}
	t.Logf("task flood from one client: %d tools/call in %v (8 at a time): %s; instance RSS before %v MiB, after %v MiB; another client meanwhile: %d of 6 tasks completed, %d failed",
		attempts, took.Round(time.Millisecond), formatCounts(counts), fmtMiB(rssBefore), fmtMiB(rssAfter), otherDone, otherFailed)
}

func fmtMiB(v []float64) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.FormatFloat(x, 'f', 1, 64))
	}
	return strings.Join(s, "/")
}

// testRollingRestart restarts the three instances one after another
// (SIGTERM, restart, next) while MRTR flows and tasks with questions run
// without pause: no flow fails, no answer or result is lost.
func testRollingRestart(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	var (
		stop                          atomic.Bool
		retries                       atomic.Int64
		flowsDone, flowsFailed        atomic.Int64
		tasksDone, tasksFailed, asked atomic.Int64
		wg                            sync.WaitGroup
		seq                           atomic.Int64
	)
	for range 4 { // MRTR flows, round by round, each round retried through a restart
		wg.Go(func() {
			for !stop.Load() {
				f := newFlow(int(seq.Add(1)))
				var err error
				for !f.done() && err == nil {
					for attempt := 0; ; attempt++ {
						err = f.step(ctx, fl.front)
						if err == nil || strings.Contains(err.Error(), ": error -") || attempt == 40 {
							break // a JSON-RPC error is the flow's failure, not the transport's
						}
						retries.Add(1)
						time.Sleep(100 * time.Millisecond)
					}
				}
				if err != nil {
					flowsFailed.Add(1)
					t.Errorf("flow during the rolling restart: %v", err)
					continue
				}
				flowsDone.Add(1)
			}
		})
	}
	for w := range 3 { // tasks that ask a question, answered through any instance
		wg.Go(func() {
			// Paced at about ten tasks a second per worker: the three
			// workers are one client address to the instances, whose
			// default MaxStoredPerClient (1,000 within the task TTL) a
			// tight loop would reach in seconds now that an answered
			// task finishes on the instance that took the answer.
			pace := time.NewTicker(100 * time.Millisecond)
			defer pace.Stop()
			for i := 0; !stop.Load(); i++ {
				<-pace.C
				file := fmt.Sprintf("roll-%d-%d.txt", w, i)
				tk, err := taskOf(retrying(ctx, fl.front, "", "tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": file}}, &retries), "confirm")
				var status, text string
				if err == nil {
					status, _, err = tk.settle(ctx, fl.front, &retries, "input_required")
				}
				if err == nil && status == "input_required" {
					asked.Add(1)
					if tr := retrying(ctx, fl.front, "", "tasks/update", map[string]any{"taskId": tk.id, "inputResponses": confirmAll(tk.final)}, &retries); tr.err != nil || tr.r.err != nil {
						err = fmt.Errorf("tasks/update %s: %v", tk.id, tr)
					}
				}
				if err == nil {
					status, text, err = tk.settle(ctx, fl.front, &retries, "completed")
				}
				if err == nil && (status != "completed" || text != "Deleted "+file) {
					err = fmt.Errorf("task %s is %s: %q, want completed: Deleted %s", tk.id, status, text, file)
				}
				if err != nil {
					tasksFailed.Add(1)
					t.Errorf("task during the rolling restart: %v", err)
					continue
				}
				tasksDone.Add(1)
			}
		})
	}
	time.Sleep(2 * time.Second) // load before the first restart
	var stops []string
	for i := range fl.inst {
		took, log, err := fl.gracefulRestart(ctx, i, 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		if !strings.Contains(log, "shutting down") || !strings.Contains(log, "msg=\"shut down\"") {
			t.Errorf("instance %d did not log a graceful shutdown:\n%s", i, log)
		}
		drained := "no task"
		if m := drainedRE.FindStringSubmatch(log); m != nil {
			drained = m[1] + " tasks"
		}
		stops = append(stops, fmt.Sprintf("%v (%s running at SIGTERM, finished in the drain)", took.Round(10*time.Millisecond), drained))
		time.Sleep(time.Second)
	}
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()
	if flowsDone.Load() == 0 || tasksDone.Load() == 0 {
		t.Errorf("no load ran through the restart: %d flows, %d tasks", flowsDone.Load(), tasksDone.Load())
	}
	t.Logf("rolling restart (SIGTERM, restart, next; stops took %s): %d MRTR flows completed, %d failed; %d tasks with a question completed, %d failed (%d questions answered, 0 lost); %d requests retried after a 502/503 or a cut connection (nothing written by any)",
		strings.Join(stops, ", "), flowsDone.Load(), flowsFailed.Load(), tasksDone.Load(), tasksFailed.Load(), asked.Load(), retries.Load())
}
