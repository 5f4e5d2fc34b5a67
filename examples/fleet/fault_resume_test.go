//go:build linux

package fleet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// legacyGet opens a GET stream of session sid on url, resuming after
// lastID.
func legacyGet(ctx context.Context, url, sid, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", lastID)
	return http.DefaultClient.Do(req)
}

// cutCall starts test_streaming_elicitation through nginx, reads its
// first event (progress, with an id) and cuts the stream. It returns the
// instance holding the call and the id.
func cutCall(ctx context.Context, fl *fleet, s *legacySession, n int) (holder int, lastID string, err error) {
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_streaming_elicitation","_meta":{"progressToken":"p%d"}}}`, n, n)
	resp, err := legacyPost(ctx, fl.front, s.sid, []byte(call))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	up := resp.Header.Get("X-Upstream")
	holder = -1
	for i, in := range fl.inst {
		if in.addr == up {
			holder = i
		}
	}
	rd := newSSEReader(resp)
	m, err := rd.next()
	if err != nil || holder < 0 || rd.LastID == "" || m.Method != "notifications/progress" {
		return 0, "", fmt.Errorf("first event of the call on %q: %+v id %q, %v", up, m, rd.LastID, err)
	}
	return holder, rd.LastID, nil // the deferred Close cuts the stream
}

// testResume: a 2025-11-25 client's call stream is cut after its first
// event; the client resumes it with Last-Event-ID on another instance,
// gets what it missed (the log line and the pending elicitation), answers
// the elicitation through nginx, and the call's response ends the resumed
// stream. Then the same with the holding instance killed while the call
// waits: the call is its record, and it completes with the answer given
// after the kill.
func testResume(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	const rounds = 4
	replayed, answered := 0, 0
	for r := range rounds {
		s, err := openLegacy(ctx, fl.front)
		if err != nil {
			t.Fatal(err)
		}
		holder, lastID, err := cutCall(ctx, fl, s, r+1)
		if err != nil {
			t.Fatal(err)
		}
		other := fl.inst[(holder+1+r%2)%len(fl.inst)].addr
		resp, err := legacyGet(ctx, "http://"+other+"/mcp", s.sid, lastID)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("resume on %s: %v %v", other, resp, err)
		}
		rd := newSSEReader(resp)
		var methods []string
		for {
			m, err := rd.next()
			if err != nil {
				t.Fatalf("round %d: the resumed stream ended after %v: %v", r, methods, err)
			}
			if m.Method != "" {
				methods = append(methods, m.Method)
			}
			if m.Method == "elicitation/create" {
				replayed++
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"note": "resumed"}}})
				ar, err := legacyPost(ctx, fl.front, s.sid, b)
				if err != nil || ar.StatusCode != http.StatusAccepted {
					t.Fatalf("answer: %v %v", ar, err)
				}
				ar.Body.Close()
				answered++
			}
			if m.Method == "" && len(m.ID) > 0 {
				if m.Error != nil || !strings.Contains(string(m.Result), "Elicitation accept") {
					t.Errorf("round %d: response %s %+v", r, m.Result, m.Error)
				}
				break
			}
		}
		resp.Body.Close()
		if strings.Join(methods, ",") != "notifications/message,elicitation/create,notifications/progress,notifications/message" {
			t.Errorf("round %d: resumed stream carried %v, want the log line and the elicitation it missed, then progress and log after the answer", r, methods)
		}
	}

	// The holder dies while the call waits.
	s, err := openLegacy(ctx, fl.front)
	if err != nil {
		t.Fatal(err)
	}
	holder, lastID, err := cutCall(ctx, fl, s, 99)
	if err != nil {
		t.Fatal(err)
	}
	other := fl.inst[(holder+1)%len(fl.inst)].addr
	resp, err := legacyGet(ctx, "http://"+other+"/mcp", s.sid, lastID)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("resume on %s: %v %v", other, resp, err)
	}
	defer resp.Body.Close()
	rd := newSSEReader(resp)
	var ask *wireMsg
	for ask == nil {
		m, err := rd.next()
		if err != nil {
			t.Fatal(err)
		}
		if m.Method == "elicitation/create" {
			ask = m
		}
	}
	victim := fl.inst[holder]
	_ = syscall.Kill(-victim.p.cmd.Process.Pid, syscall.SIGKILL)
	killed := time.Now()
	<-victim.p.done
	// The call was its record in Redis (issue 32): the answer, POSTed
	// through nginx after the kill, is kept, and the resumed stream's
	// instance takes the call over once the holder's heartbeat lapses.
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": ask.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"note": "after the kill"}}})
	ar, err := legacyPost(ctx, fl.front, s.sid, b)
	if err != nil || ar.StatusCode != http.StatusAccepted {
		t.Fatalf("answer after the kill: %v %v", ar, err)
	}
	ar.Body.Close()
	var final *wireMsg
	for final == nil {
		m, err := rd.next()
		if err != nil {
			t.Fatalf("the resumed stream ended with no response after the holder died: %v", err)
		}
		if m.Method == "" && len(m.ID) > 0 {
			final = m
		}
	}
	took := time.Since(killed)
	if final.Error != nil || !strings.Contains(string(final.Result), "Elicitation accept") {
		t.Errorf("after the holder died: %s %+v, want the call's result with the answer given after the kill", final.Result, final.Error)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	fl.restart(holder, keyOne, "")
	t.Logf("resumable streams: %d calls cut after their first event and resumed with Last-Event-ID on another instance: %d pending elicitations replayed, %d answered through nginx, every call's response on the resumed stream; holder killed with SIGKILL while a resumed call waited, then its question answered through nginx: the call completed on the resumed stream's instance %v after the kill",
		rounds, replayed, answered, took.Round(100*time.Millisecond))
}

// tsResume is the final report of resume-client.mjs.
type tsResume struct {
	Error  string `json:"error"`
	Rounds []struct {
		SessionID   string `json:"sessionId"`
		ResumeText  string `json:"resumeText"`
		ResumeError string `json:"resumeError"`
		ResumeMs    int    `json:"resumeMs"`
		Cut         *struct {
			Upstream    string `json:"upstream"`
			LastEventID string `json:"lastEventId"`
		} `json:"cut"`
		Asked        int      `json:"asked"`
		CancelResult string   `json:"cancelResult"`
		AfterText    string   `json:"afterText"`
		AfterError   string   `json:"afterError"`
		Errors       []string `json:"errors"`
	} `json:"rounds"`
	Gets []struct {
		LastEventID string `json:"lastEventId"`
		Status      int    `json:"status"`
		Upstream    string `json:"upstream"`
	} `json:"gets"`
	CallResponses []struct {
		Tool        string `json:"tool"`
		Status      int    `json:"status"`
		ContentType string `json:"contentType"`
		Upstream    string `json:"upstream"`
	} `json:"callResponses"`
}

// testResumeTS runs the official TypeScript SDK through nginx: its call
// stream is cut after the first event, and the SDK resumes it by itself
// (GET with Last-Event-ID, wherever nginx sends it), answers the
// elicitation it missed and gets the call's result; a call it cancels is
// answered with a stream of a proper Content-Type, never an empty 200.
func testResumeTS(t *testing.T, ctx context.Context, fl *fleet) {
	node, dir := nodeClient(t)
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	const rounds = 3
	script, err := filepath.Abs(filepath.Join("testdata", "resume-client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script, fl.front, fmt.Sprint(rounds))
	cmd.Env = append(os.Environ(), "BATON_NODE_DIR="+dir)
	cmd.WaitDelay = 5 * time.Second
	var stderr logBuffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var final struct {
		Final *tsResume `json:"final"`
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || final.Final == nil || final.Final.Error != "" || runErr != nil {
		t.Fatalf("resume-client: %v; %s\nstderr:\n%s", runErr, out, stderr.String())
	}
	r := final.Final
	resumed, crossed, cancelled := 0, 0, 0
	for i, rd := range r.Rounds {
		if rd.Cut == nil {
			t.Errorf("round %d: the stream was not cut (no event with an id)", i)
			continue
		}
		if rd.ResumeText != "Elicitation accept" || rd.Asked != 1 {
			t.Errorf("round %d: resumed call %q %q, %d elicitations; want Elicitation accept after 1", i, rd.ResumeText, rd.ResumeError, rd.Asked)
		}
		// The SDK resumes from the last id it read, which may be a later
		// event of the same stream than the one the cut was made after.
		stream, _, _ := strings.Cut(rd.Cut.LastEventID, ".")
		for _, g := range r.Gets {
			if strings.HasPrefix(g.LastEventID, stream+".") && g.Status == http.StatusOK {
				resumed++
				if g.Upstream != rd.Cut.Upstream {
					crossed++
				}
				break
			}
		}
		if rd.AfterText != "Elicitation accept" {
			t.Errorf("round %d: the session after: %q %q", i, rd.AfterText, rd.AfterError)
		}
		if len(rd.Errors) > 0 {
			t.Logf("round %d: the SDK reported %q", i, rd.Errors)
		}
	}
	for _, c := range r.CallResponses {
		if c.Tool != "slow_compute" {
			continue
		}
		cancelled++
		if c.Status != http.StatusOK || !(strings.HasPrefix(c.ContentType, "text/event-stream") || strings.HasPrefix(c.ContentType, "application/json")) {
			t.Errorf("cancelled slow_compute: HTTP %d Content-Type %q, want 200 with text/event-stream or application/json", c.Status, c.ContentType)
		}
	}
	if resumed != rounds {
		t.Errorf("%d of %d cut streams resumed by the SDK with Last-Event-ID", resumed, rounds)
	}
	if cancelled != rounds {
		t.Errorf("%d responses to cancelled calls seen, want %d", cancelled, rounds)
	}
	t.Logf("TypeScript SDK 2025-11-25 through nginx: %d call streams cut after their first event, %d resumed by the SDK with Last-Event-ID (%d on another instance), each answering the elicitation it missed and getting its result; %d cancelled calls answered 200 with a Content-Type",
		rounds, resumed, crossed, cancelled)
}
