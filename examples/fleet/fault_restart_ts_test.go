//go:build linux

package fleet_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsRestart is the final report of restart-client.mjs.
type tsRestart struct {
	Error                      string
	Started, Completed, Failed int
	Asked, Answered, Lost      int
	Failures                   []json.RawMessage
	Errors                     []string
	Posts                      struct {
		Total    int
		ByStatus map[string]int
	}
	Gets                               int
	GetsByStatus                       map[string]int
	ResumeAttempts, Resumes, ResumedOK int
	ResumeDetail                       []json.RawMessage
}

// testRollingRestartTS: 2025-11-25 sessions of the official TypeScript
// SDK run onboard_user (two elicitations each) continuously through nginx
// while the three instances are restarted one after another (SIGTERM, the
// drain, restart), each user taking 50 ms to answer a question, and 2.5 s
// for the first question of every eighth flow. Every flow started
// completes with its own answers: no flow fails and no answer is lost.
// The calls still parked a second into an instance's drain have their
// streams ended by it (with a retry field); the SDK resumes them with GET
// and Last-Event-ID on another instance, answers there, and the answer
// reaches the call on the draining instance: at least one stream is
// resumed, and every one resumed gets 200.
//
// The instances stop with server.Serve: every response during the drain
// says Connection: close and the instance waits until nginx holds no idle
// connection to it before closing its connections, so that no request
// nginx has just written on a pooled connection is cut (a 502 for an
// answer POST, which neither nginx nor the SDK resends, used to lose its
// flow about once in two runs).
func testRollingRestartTS(t *testing.T, ctx context.Context, fl *fleet) {
	node, dir := nodeClient(t)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	const workers = 12
	script, err := filepath.Abs(filepath.Join("testdata", "restart-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script, fl.front, fmt.Sprint(workers))
	cmd.Env = append(os.Environ(), "BATON_NODE_DIR="+dir)
	cmd.WaitDelay = 5 * time.Second
	var stderr logBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	select {
	case l := <-lines:
		if !strings.Contains(l, `"ready":true`) {
			stdin.Close()
			_ = cmd.Wait()
			t.Fatalf("restart-client: %s\nstderr:\n%s", l, stderr.String())
		}
	case <-ctx.Done():
		t.Fatalf("restart-client never opened its sessions\nstderr:\n%s", stderr.String())
	}
	time.Sleep(2 * time.Second) // load before the first restart
	var stops []string
	for i := range fl.inst {
		took, log, err := fl.gracefulRestart(ctx, i, 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		if !strings.Contains(log, "msg=\"shut down\"") {
			t.Errorf("instance %d did not log a graceful shutdown:\n%s", i, log)
		}
		stops = append(stops, took.Round(10*time.Millisecond).String())
		time.Sleep(time.Second)
	}
	time.Sleep(time.Second)
	fmt.Fprintln(stdin, "stop")
	stdin.Close()
	var last string
	for l := range lines {
		last = l
	}
	runErr := cmd.Wait()
	var final struct {
		Final *tsRestart `json:"final"`
	}
	if err := json.Unmarshal([]byte(last), &final); err != nil || final.Final == nil || final.Final.Error != "" || runErr != nil {
		t.Fatalf("restart-client: %v; %s\nstderr:\n%s", runErr, last, stderr.String())
	}
	r := final.Final
	for _, f := range r.Failures {
		t.Errorf("flow failed: %s", f)
	}
	if len(r.Errors) > 0 {
		t.Logf("transport errors the SDK reported (%d): %s", len(r.Errors), strings.Join(r.Errors[:min(len(r.Errors), 10)], "; "))
	}
	if r.Completed == 0 || r.Failed != 0 || r.Lost != 0 || r.Started != r.Completed {
		t.Errorf("%d flows started, %d completed, %d failed, %d answers lost; want all completed, none lost", r.Started, r.Completed, r.Failed, r.Lost)
	}
	if r.Resumes == 0 || r.Resumes != r.ResumedOK {
		t.Errorf("%d streams resumed with Last-Event-ID, %d of them with 200; want at least one, all with 200: %s", r.Resumes, r.ResumedOK, r.ResumeDetail)
	}
	if n := r.Posts.ByStatus["502"]; n > 0 {
		t.Errorf("%d POSTs got 502 from nginx: a pooled connection was closed under a request", n)
	}
	t.Logf("rolling restart with %d 2025-11-25 SDK sessions (stops took %s): %d onboard_user flows started, %d completed, %d failed; %d elicitations asked, %d answered, %d answers lost; %d POSTs %v; %d GETs %v; %d streams of parked calls ended by a drain and resumed with Last-Event-ID on another instance (%d with 200, in %d attempts)",
		workers, strings.Join(stops, ", "), r.Started, r.Completed, r.Failed, r.Asked, r.Answered, r.Lost, r.Posts.Total, r.Posts.ByStatus, r.Gets, r.GetsByStatus, r.Resumes, r.ResumedOK, r.ResumeAttempts)
}
