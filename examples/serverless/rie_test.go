//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/internal/testredis"
)

// rieBinary returns the AWS Lambda Runtime Interface Emulator: BATON_LAMBDA_RIE,
// or what scripts/lambda-rie.sh installs; the test skips, saying how to
// get it, without one.
func rieBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BATON_LAMBDA_RIE"); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("BATON_LAMBDA_RIE=%s: %v", p, err)
		}
		return p
	}
	base := os.Getenv("BATON_CACHE")
	if base == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		base = filepath.Join(cache, "baton")
	}
	p := filepath.Join(base, "aws-lambda-rie", "aws-lambda-rie")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no AWS Lambda Runtime Interface Emulator at %s: run scripts/lambda-rie.sh (go install, pinned) or set BATON_LAMBDA_RIE", p)
	}
	return p
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestRIELegacyElicitation: under the real Lambda runtime (the Runtime
// Interface Emulator running the built function, a function URL in
// BUFFERED mode, sessions in a real Redis), a 2025-11-25 session's
// elicitation runs across invocations, none longer than a second: the
// call's invocation returns the question and ends (the call parks as its
// record), the answer's invocation acknowledges it (having run the call to
// its response), and the stream's resume returns the result.
func TestRIELegacyElicitation(t *testing.T) {
	rie := rieBinary(t)
	rs := testredis.Start(t)
	dir := t.TempDir()
	fn := filepath.Join(dir, "bootstrap")
	if out, err := exec.Command("go", "build", "-o", fn, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", freeAddr(t), fn)
	cmd.Env = append(os.Environ(), "BATON_STATE_KEY="+testKey, "BATON_ALLOWED_HOSTS="+testDomain,
		"BATON_LAMBDA_EVENT=url", "BATON_REDIS_URL=unix://"+rs.Socket, "AWS_LAMBDA_FUNCTION_TIMEOUT=10")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("emulator and function:\n%s", log.String())
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the emulator did not listen on %s:\n%s", addr, log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	var longest time.Duration
	invoke := func(what, method, body string, headers map[string]string) events.LambdaFunctionURLResponse {
		t.Helper()
		h := map[string]string{"host": testDomain, "content-type": "application/json", "accept": "application/json, text/event-stream"}
		for k, v := range headers {
			h[k] = v
		}
		ev := events.LambdaFunctionURLRequest{Version: "2.0", RawPath: "/mcp", Headers: h, Body: body,
			RequestContext: events.LambdaFunctionURLRequestContext{DomainName: testDomain, HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: "/mcp"}}}
		b, _ := json.Marshal(ev)
		start := time.Now()
		resp, err := http.Post("http://"+addr+"/2015-03-31/functions/function/invocations", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		var out events.LambdaFunctionURLResponse
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: HTTP %d from the emulator, %v", what, resp.StatusCode, err)
		}
		took := time.Since(start)
		longest = max(longest, took)
		if took > time.Second {
			t.Errorf("%s: the invocation took %v, want under a second", what, took)
		}
		t.Logf("%s: %d in %v", what, out.StatusCode, took.Round(time.Millisecond))
		return out
	}
	init := invoke("initialize", "POST", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"rie-test","version":"1"}}}`, nil)
	sid := init.Headers["Mcp-Session-Id"]
	if init.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %v %s", init.StatusCode, init.Headers, init.Body)
	}
	session := map[string]string{"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
	if r := invoke("notifications/initialized", "POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, session); r.StatusCode != 202 {
		t.Fatalf("initialized: %d", r.StatusCode)
	}
	call := invoke("tools/call greet", "POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{}}}`, session)
	ev := regexp.MustCompile(`id: (\S+)\nevent: message\ndata: (\{.*"method":"elicitation/create".*\})\n`).FindStringSubmatch(call.Body)
	if call.StatusCode != 200 || ev == nil || strings.Contains(call.Body, `"result"`) || !strings.Contains(call.Body, "retry: ") {
		t.Fatalf("the call's invocation: %d %q; want its question with an event id and a retry field, no response", call.StatusCode, call.Body)
	}
	var q struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal([]byte(ev[2]), &q); err != nil {
		t.Fatal(err)
	}
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"Ada"}}}`, q.ID)
	if r := invoke("the answer", "POST", answer, session); r.StatusCode != 202 {
		t.Fatalf("the answer: %d %s", r.StatusCode, r.Body)
	}
	resumed := invoke("GET with Last-Event-ID", "GET", "", map[string]string{"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25", "accept": "text/event-stream", "last-event-id": ev[1]})
	if resumed.StatusCode != 200 || !strings.Contains(resumed.Body, `"id":1,"result"`) || !strings.Contains(resumed.Body, "Hello, Ada!") {
		t.Fatalf("the resumed stream: %d %q; want the call's result", resumed.StatusCode, resumed.Body)
	}
	t.Logf("a 2025-11-25 elicitation across 5 invocations of the function under the Lambda Runtime Interface Emulator, the longest %v", longest.Round(time.Millisecond))
}
