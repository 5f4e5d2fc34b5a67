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
	Gets, Resumes, ResumedOK int
	ResumeDetail             []json.RawMessage
}

// testRollingRestartTS: 2025-11-25 sessions of the official TypeScript
// SDK run onboard_user (two elicitations each) continuously through nginx
// while the three instances are restarted one after another (SIGTERM, the
// drain, restart), each user taking 50 ms to answer a question. Every flow started completes with its own answers: no
// flow fails and no answer is lost; streams cut by a restart are resumed
// with Last-Event-ID.
//
// Known failure, so the row runs only with BATON_FLEET_ROLLING_SDK=1: in
// about half the runs one flow of ~2500 fails. At SIGTERM the example
// calls http.Server.Shutdown alongside the drain, which closes the idle
// keep-alive connections nginx holds to the instance; an answer POST
// nginx has just written on one gets "upstream prematurely closed
// connection" and nginx, not retrying a POST, returns 502. The SDK does
// not resend a response ("Failed to send response"), so the call parked
// on the holder never gets its answer: the holder's drain waits its whole
// deadline (25 s) for it and then fails it ("the request's response is
// lost: the server instance running it went away").
func testRollingRestartTS(t *testing.T, ctx context.Context, fl *fleet) {
	if os.Getenv("BATON_FLEET_ROLLING_SDK") != "1" {
		t.Skip("known failure (an answer POST cut by the keep-alive race at SIGTERM is lost); BATON_FLEET_ROLLING_SDK=1 runs it")
	}
	node, dir := nodeClient(t)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	const workers = 6
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
	if r.Resumes != r.ResumedOK {
		t.Errorf("%d of %d resumptions with Last-Event-ID failed: %s", r.Resumes-r.ResumedOK, r.Resumes, r.ResumeDetail)
	}
	// The drain lets parked calls finish, so a graceful restart cuts no
	// call stream; it closes the listen streams, which the SDK reopens
	// (a GET beyond each session's first).
	t.Logf("rolling restart with %d 2025-11-25 SDK sessions (stops took %s): %d onboard_user flows started, %d completed, %d failed; %d elicitations asked, %d answered, %d answers lost; %d POSTs %v; %d GETs (%d listen streams reopened after a drain closed them), %d with Last-Event-ID, i.e. cut streams resumed (%d with 200)",
		workers, strings.Join(stops, ", "), r.Started, r.Completed, r.Failed, r.Asked, r.Answered, r.Lost, r.Posts.Total, r.Posts.ByStatus, r.Gets, r.Gets-workers, r.Resumes, r.ResumedOK)
}
