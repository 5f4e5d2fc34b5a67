//go:build linux

package fleet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Waiting is data (issue 32), on three instances behind nginx and a real
// Redis: 100 2025-11-25 calls (half of them the official TypeScript
// SDK's, half the official Go SDK's) and 100 tasks wait 60 s for their
// users' answers while every instance is restarted (SIGTERM, the default
// drain, restart; one after another), and again while every instance is
// killed with SIGKILL and restarted. Nothing is lost: every answer given
// reaches its handler, every call's result arrives, every task completes.

// drainedWorkRE reads how long an instance's drain of its work took.
var drainedWorkRE = regexp.MustCompile(`msg="shutdown: drained" took=\S+ work=(\S+)`)

// waitThink is how long the users take to answer.
const waitThink = 60 * time.Second

// waitingCalls is the count of calls of each SDK.
const waitingCalls = 50

// waitingTasks is the count of tasks.
const waitingTasks = 100

func TestWaitingSurvives(t *testing.T) {
	nginxBin := requireNginx(t)
	node, dir := nodeClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	fl := newFleet(t, nginxBin, keyOne, "")
	t.Run("rolling restart", func(t *testing.T) { testWaiting(t, ctx, fl, node, dir, false) })
	t.Run("SIGKILL", func(t *testing.T) { testWaiting(t, ctx, fl, node, dir, true) })
}

// forwardedFor is a client's transport that says which user's address it
// comes from (nginx appends its own peer; the instances trust it).
type forwardedFor struct {
	addr string
	rt   http.RoundTripper
}

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.addr)
	return f.rt.RoundTrip(r)
}

// tsWait is wait-client.mjs's final report.
type tsWait struct {
	Error                      string
	Started, Completed, Failed int
	Asked, Answered, Lost      int
	Failures                   []json.RawMessage
	Errors                     []string
	Gets                       struct {
		Total, Resumed int
		ByStatus       map[string]int
	}
}

func testWaiting(t *testing.T, ctx context.Context, fl *fleet, node, dir string, kill bool) {
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	start := time.Now()
	var logs []string // of the instances stopped
	defer func() {
		if !t.Failed() {
			return
		}
		for _, in := range fl.inst {
			logs = append(logs, in.p.log.String())
		}
		for i, log := range logs { // what the instances said
			var lines []string
			for _, l := range strings.Split(log, "\n") {
				if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
					lines = append(lines, l)
				}
			}
			if len(lines) > 30 {
				lines = append(lines[:15], lines[len(lines)-15:]...)
			}
			t.Logf("instance log %d: %d warnings and errors:\n%s", i, len(lines), strings.Join(lines, "\n"))
		}
	}()

	// The TypeScript SDK's sessions, in one Node process.
	script, err := filepath.Abs(filepath.Join("testdata", "wait-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	phase := 1
	if kill {
		phase = 2
	}
	cmd := exec.CommandContext(ctx, node, script, fl.front, fmt.Sprint(waitingCalls), fmt.Sprint(waitThink.Milliseconds()), fmt.Sprintf("10.%d.1", phase))
	cmd.Env = append(os.Environ(), "BATON_NODE_DIR="+dir)
	cmd.WaitDelay = 5 * time.Second
	var stderr logBuffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tsAsked := make(chan struct{})
	lastLine := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		var last string
		closed := false
		for sc.Scan() {
			last = sc.Text()
			if !closed && strings.Contains(last, fmt.Sprintf(`"asked":%d}`, waitingCalls)) {
				close(tsAsked)
				closed = true
			}
		}
		lastLine <- last
	}()

	// The Go SDK's sessions: each user answers the first question
	// waitThink after it came.
	type goOutcome struct {
		text    string
		err     error
		answers int
	}
	goOut := make(chan goOutcome, waitingCalls)
	var goAsked atomic.Int64
	goAllAsked := make(chan struct{})
	var goOnce sync.Once
	for i := range waitingCalls {
		var answers atomic.Int64
		name, email := fmt.Sprintf("Go%d", i), fmt.Sprintf("go%d@example.com", i)
		c := gosdk.NewClient(&gosdk.Implementation{Name: "baton-wait-go", Version: "1.0.0"}, &gosdk.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
				if strings.HasPrefix(req.Params.Message, "What is your name") {
					if answers.Load() == 0 && goAsked.Add(1) == waitingCalls {
						goOnce.Do(func() { close(goAllAsked) })
					}
					select {
					case <-time.After(waitThink):
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					answers.Store(1)
					return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}, nil
				}
				answers.Store(2)
				return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"email": email}}, nil
			},
		})
		hc := &http.Client{Transport: forwardedFor{fmt.Sprintf("10.%d.2.%d", phase, i+1), http.DefaultTransport}}
		cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: fl.front, HTTPClient: hc, MaxRetries: 100}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("Go SDK session %d: %v", i, err)
		}
		go func() {
			defer cs.Close()
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "onboard_user"})
			o := goOutcome{err: err, answers: int(answers.Load())}
			if err == nil && len(res.Content) == 1 {
				if tc, ok := res.Content[0].(*gosdk.TextContent); ok {
					o.text = tc.Text
				}
			}
			if want := fmt.Sprintf("Welcome aboard, %s <%s>", name, email); err == nil && o.text != want {
				o.err = fmt.Errorf("result %q, want %q", o.text, want)
			}
			goOut <- o
		}()
	}

	// The tasks, through nginx: each waits in input_required.
	tasks := make([]*task, waitingTasks)
	var wg sync.WaitGroup
	errs := make(chan error, waitingTasks)
	for i := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each task is another user's (its own address), as the
			// per-client quota of running tasks expects.
			tk, err := taskOf(do(ctx, fl.front, fmt.Sprintf("10.%d.3.%d", phase, i+1), "tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": fmt.Sprintf("f%d.txt", i)}}), "confirm")
			if err == nil {
				_, err = tk.poll(ctx, fl.front, "input_required")
			}
			tasks[i] = tk
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, ch := range []chan struct{}{tsAsked, goAllAsked} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("not every call got its first question: Go %d of %d\nnode stderr:\n%s", goAsked.Load(), waitingCalls, stderr.String())
		}
	}
	waitingAt := time.Since(start)

	// Every instance goes away and comes back while they all wait.
	var stops []string
	for i := range fl.inst {
		if kill {
			in := fl.inst[i]
			if err := syscall.Kill(-in.p.cmd.Process.Pid, syscall.SIGKILL); err != nil {
				t.Fatalf("kill instance %d: %v", i, err)
			}
			<-in.p.done
			logs = append(logs, in.p.log.String())
			fl.inst[i] = fl.startInstance(i, in.addr, keyOne, "")
			if err := fl.waitServed(ctx); err != nil {
				t.Fatal(err)
			}
			stops = append(stops, "SIGKILL")
		} else {
			took, log, err := fl.gracefulRestart(ctx, i, 30*time.Second)
			logs = append(logs, log)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log, `msg="shut down"`) {
				t.Errorf("instance %d did not log a graceful shutdown", i)
			}
			// The drain of the work (waiting calls and tasks park at
			// once) is the instance's; the rest of the stop is nginx
			// letting go of its pooled connections (keepalive_timeout 2s,
			// docs/deployment.md, "Graceful shutdown").
			m := drainedWorkRE.FindStringSubmatch(log)
			if m == nil {
				t.Fatalf("instance %d logged no drain:\n%s", i, log)
			}
			work, err := time.ParseDuration(m[1])
			if err != nil || work > time.Second {
				t.Errorf("instance %d drained its work in %s with only waiting work on it; want under a second", i, m[1])
			}
			stops = append(stops, fmt.Sprintf("%v (work %s)", took.Round(10*time.Millisecond), m[1]))
		}
	}
	faultsDone := time.Since(start)
	if faultsDone > waitThink {
		t.Fatalf("the instances came back %v after the start, after the users answered: the test proves nothing", faultsDone)
	}

	// The users answer the tasks' questions too, once they have thought.
	time.Sleep(time.Until(start.Add(waitingAt + waitThink)))
	taskErrs := make(chan error, waitingTasks)
	for _, tk := range tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			asked, err := tk.poll(ctx, fl.front, "input_required")
			if err == nil {
				err = tk.answerAll(ctx, fl.front, asked)
			}
			if err == nil {
				var final map[string]json.RawMessage
				if final, err = tk.poll(ctx, fl.front, "completed"); err == nil && !strings.Contains(taskText(final), "f") {
					err = fmt.Errorf("task %s: result %q", tk.id, taskText(final))
				}
			}
			if err != nil {
				taskErrs <- err
			}
		}()
	}
	wg.Wait()
	close(taskErrs)
	tasksLost := 0
	for err := range taskErrs {
		tasksLost++
		t.Error(err)
	}

	goDone, goLost := 0, 0
	for range waitingCalls {
		select {
		case o := <-goOut:
			if o.err != nil {
				goLost++
				t.Errorf("Go SDK call: %v (answers given %d)", o.err, o.answers)
			} else {
				goDone++
			}
		case <-ctx.Done():
			t.Fatalf("Go SDK calls: %d finished, the rest did not", goDone+goLost)
		}
	}
	runErr := cmd.Wait()
	last := <-lastLine
	var final struct {
		Final *tsWait `json:"final"`
	}
	if err := json.Unmarshal([]byte(last), &final); err != nil || final.Final == nil || final.Final.Error != "" || runErr != nil {
		t.Fatalf("wait-client: %v; %s\nstderr:\n%s", runErr, last, stderr.String())
	}
	r := final.Final
	for _, f := range r.Failures {
		t.Errorf("TypeScript SDK call failed: %s", f)
	}
	if r.Started != waitingCalls || r.Completed != waitingCalls || r.Lost != 0 {
		t.Errorf("TypeScript SDK: %d calls started, %d completed, %d answers lost; want %d, %d, 0", r.Started, r.Completed, r.Lost, waitingCalls, waitingCalls)
	}
	// No instance said anything went wrong (a parked call's handler
	// returning is not an error).
	for i, log := range append(logs, fl.inst[0].p.log.String(), fl.inst[1].p.log.String(), fl.inst[2].p.log.String()) {
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, "level=ERROR") {
				t.Errorf("instance log %d: %s", i, l)
			}
		}
	}
	what := "rolling restart (SIGTERM, default drain, restart), stops took " + strings.Join(stops, ", ")
	if kill {
		what = "SIGKILL and restart of each instance"
	}
	t.Logf("%s, %v to %v after the start, while %d calls and %d tasks waited %v for their users: TypeScript SDK %d/%d calls completed (%d answers, %d lost; %d GETs, %d with Last-Event-ID, %v), Go SDK %d/%d completed, tasks %d/%d completed; total %v",
		what, waitingAt.Round(100*time.Millisecond), faultsDone.Round(100*time.Millisecond), 2*waitingCalls, waitingTasks, waitThink,
		r.Completed, r.Started, r.Answered, r.Lost, r.Gets.Total, r.Gets.Resumed, r.Gets.ByStatus, goDone, waitingCalls, waitingTasks-tasksLost, waitingTasks, time.Since(start).Round(time.Second))
}
