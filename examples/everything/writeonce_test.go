package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/redisledger"
)

// inputRequired returns the keys asked and the state of an input_required
// result.
func inputRequired(t *testing.T, r rpcResponse) (keys []string, state string) {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("error %d: %s", r.Error.Code, r.Error.Message)
	}
	if string(r.Result["resultType"]) != `"input_required"` {
		t.Fatalf("not input_required: %v", r.Result)
	}
	var reqs map[string]json.RawMessage
	if err := json.Unmarshal(r.Result["inputRequests"], &reqs); err != nil {
		t.Fatal(err)
	}
	for k := range reqs {
		keys = append(keys, k)
	}
	if err := json.Unmarshal(r.Result["requestState"], &state); err != nil || state == "" {
		t.Fatalf("requestState: %s", r.Result["requestState"])
	}
	return keys, state
}

func retry(state string, answers map[string]any) map[string]any {
	return map[string]any{"requestState": state, "inputResponses": answers}
}

func acceptContent(field, value string) map[string]any {
	return map[string]any{"action": "accept", "content": map[string]any{field: value}}
}

// onboard drives onboard_user over modern MRTR rounds, each round on the
// next server of urls (cycling), and returns the result text and the state
// of round 2.
func onboard(t *testing.T, urls ...string) (text, round2State string) {
	t.Helper()
	at := func(i int) string { return urls[i%len(urls)] }
	keys, s1 := inputRequired(t, callTool(t, at(0), "onboard_user", map[string]any{}, nil))
	if strings.Join(keys, ",") != "q0" {
		t.Fatalf("round 1 asks %v", keys)
	}
	keys, s2 := inputRequired(t, callTool(t, at(1), "onboard_user", map[string]any{}, retry(s1, map[string]any{"q0": acceptContent("name", "Alice")})))
	if strings.Join(keys, ",") != "q1" {
		t.Fatalf("round 2 asks %v", keys)
	}
	r3 := callTool(t, at(2), "onboard_user", map[string]any{}, retry(s2, map[string]any{"q1": acceptContent("email", "alice@example.com")}))
	text, isErr := toolText(t, r3)
	if isErr {
		t.Fatalf("round 3 is an error: %q", text)
	}
	return text, s2
}

func toolText(t *testing.T, r rpcResponse) (string, bool) {
	t.Helper()
	if string(r.Result["resultType"]) != `"complete"` {
		t.Fatalf("not complete: %v %v", r.Result, r.Error)
	}
	return text(t, r)
}

func TestOnboardModernRounds(t *testing.T) {
	ts := newTestServer(t, testKey)
	got, s2 := onboard(t, ts.URL)
	if got != "Welcome aboard, Alice <alice@example.com>" {
		t.Fatalf("result %q", got)
	}
	// The first answer rides in round 2's state, and cannot be read there.
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(s2, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(payload), "Alice") || strings.Contains(s2, "Alice") {
		t.Fatalf("round 2's requestState reveals the first answer: %s", payload)
	}
}

// Rounds alternate between two instances that share only the key.
func TestOnboardAlternatingInstances(t *testing.T) {
	a := newTestServer(t, testKey)
	b := newTestServer(t, testKey)
	if got, _ := onboard(t, a.URL, b.URL); got != "Welcome aboard, Alice <alice@example.com>" {
		t.Fatalf("result %q", got)
	}
	if got, _ := onboard(t, b.URL, a.URL); got != "Welcome aboard, Alice <alice@example.com>" {
		t.Fatalf("result %q", got)
	}
}

// test_elicitation is written in the blocking style; modern clients get it
// through one MRTR round.
func TestBlockingElicitationModern(t *testing.T) {
	ts := newTestServer(t, testKey)
	args := map[string]any{"message": "Who are you?"}
	keys, s1 := inputRequired(t, callTool(t, ts.URL, "test_elicitation", args, nil))
	if strings.Join(keys, ",") != "q0" {
		t.Fatalf("asks %v", keys)
	}
	answer := map[string]any{"action": "accept", "content": map[string]any{"username": "alice", "email": "alice@example.com"}}
	got, isErr := toolText(t, callTool(t, ts.URL, "test_elicitation", args, retry(s1, map[string]any{"q0": answer})))
	if isErr || !strings.HasPrefix(got, "User response: action=accept") || !strings.Contains(got, `"username":"alice"`) {
		t.Fatalf("result %q", got)
	}
	// The answer is validated against the schema the handler sent.
	bad := map[string]any{"action": "accept", "content": map[string]any{"username": "alice", "email": "not-an-email"}}
	r := callTool(t, ts.URL, "test_elicitation", args, retry(s1, map[string]any{"q0": bad}))
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "email") {
		t.Fatalf("invalid answer: %+v %v", r.Error, r.Result)
	}
}

// A confirmation is redeemable once: replaying the same retry on the same
// instance does not transfer twice.
func TestReplayedConfirmationSameInstance(t *testing.T) {
	ts := newTestServer(t, testKey)
	_, state := inputRequired(t, call(t, ts.URL, nil))
	yes := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	if got, isErr := text(t, call(t, ts.URL, retry(state, yes))); isErr || got != "Transferred 25.5 to bob" {
		t.Fatalf("first: %q", got)
	}
	if got, isErr := text(t, call(t, ts.URL, retry(state, yes))); !isErr || !strings.Contains(got, "already used") {
		t.Fatalf("replay: %q (isError %v)", got, isErr)
	}
	// A new flow (a new confirmation) transfers again.
	_, state2 := inputRequired(t, call(t, ts.URL, nil))
	if got, isErr := text(t, call(t, ts.URL, retry(state2, yes))); isErr || got != "Transferred 25.5 to bob" {
		t.Fatalf("new flow: %q", got)
	}
}

// With a shared Redis ledger, replaying the retry on another instance does
// not transfer either.
func TestReplayedConfirmationOtherInstance(t *testing.T) {
	rs := testredis.Start(t)
	server := func() *httptest.Server {
		keys, err := stateKeys(testKey)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := newServerWithLedger(keys, time.Minute, redisledger.New(rs.Client(t), "baton:redeemed:"), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		return ts
	}
	a, b := server(), server()
	_, state := inputRequired(t, call(t, a.URL, nil))
	yes := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	if got, isErr := text(t, call(t, a.URL, retry(state, yes))); isErr || got != "Transferred 25.5 to bob" {
		t.Fatalf("first on a: %q", got)
	}
	if got, isErr := text(t, call(t, b.URL, retry(state, yes))); !isErr || !strings.Contains(got, "already used") {
		t.Fatalf("replay on b: %q (isError %v)", got, isErr)
	}
}

// test_elicitation's round 2 lands on another instance.
func TestBlockingElicitationAlternatingInstances(t *testing.T) {
	a := newTestServer(t, testKey)
	b := newTestServer(t, testKey)
	args := map[string]any{"message": "Who are you?"}
	_, s1 := inputRequired(t, callTool(t, a.URL, "test_elicitation", args, nil))
	answer := map[string]any{"action": "accept", "content": map[string]any{"username": "alice", "email": "alice@example.com"}}
	got, isErr := toolText(t, callTool(t, b.URL, "test_elicitation", args, retry(s1, map[string]any{"q0": answer})))
	if isErr || !strings.HasPrefix(got, "User response: action=accept") {
		t.Fatalf("result %q", got)
	}
}

// The Redis ledger goes down between the question and the confirmed retry:
// the transfer fails closed, and the client reads a generic message with a
// reference, not Redis's address; the log has both.
func TestLedgerDownMidFlow(t *testing.T) {
	rs := testredis.Start(t)
	keys, err := stateKeys(testKey)
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	// One attempt per command and per dial: a down Redis fails at once.
	opts := rs.Options()
	opts.MaxRetries, opts.DialerRetries = -1, 1
	client := redis.NewClient(opts)
	t.Cleanup(func() { _ = client.Close() })
	srv, err := newServerWithLedger(keys, time.Minute, redisledger.New(client, "baton:redeemed:"), slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)

	_, state := inputRequired(t, call(t, ts.URL, nil))
	// SHUTDOWN NOSAVE: the server exits; the command's own reply is the
	// connection closing.
	_ = rs.Client(t).ShutdownNoSave(context.Background()).Err()
	yes := map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	got, isErr := text(t, call(t, ts.URL, retry(state, yes)))
	m := regexp.MustCompile(`^Internal error \(ref ([0-9a-f]{8})\): details are in the server log$`).FindStringSubmatch(got)
	if !isErr || m == nil || strings.Contains(got, "Transferred") {
		t.Fatalf("ledger down: %q (isError %v); want the generic message and no transfer", got, isErr)
	}
	log := logs.String()
	if !strings.Contains(log, "ref="+m[1]) || !strings.Contains(log, "redis ledger") || !strings.Contains(log, rs.Socket) {
		t.Fatalf("the log lacks the reference or the ledger's error:\n%s", log)
	}
	t.Logf("client: %q", got)
}

// A requestState whose key id is 40 KB is refused naming the id, cut to a
// few dozen bytes.
func TestHugeKeyIDIsClipped(t *testing.T) {
	ts := newTestServer(t, testKey)
	kid := strings.Repeat("k", 40<<10)
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"` + kid + `","typ":"JWT"}`))
	r := call(t, ts.URL, retry(head+".e30.c2ln", map[string]any{}))
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "unknown key id") {
		t.Fatalf("got %+v %v", r.Error, r.Result)
	}
	if n := len(r.Error.Message); n > 300 {
		t.Fatalf("the refusal is %d bytes: %.200s…", n, r.Error.Message)
	}
	t.Logf("refusal: %s", r.Error.Message)
}
