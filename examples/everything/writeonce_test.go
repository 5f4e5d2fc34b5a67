package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/internal/testredis"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/redisfleet"
)

// client returns a test client for target that answers the example's
// forms as Alice would: her name, her email, yes to a transfer, and to
// test_elicitation the given content.
func testClient(t *testing.T, target mcptest.Target, elicitation map[string]any) *mcptest.Client {
	t.Helper()
	c, err := mcptest.New(target, &mcptest.Options{
		Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
			switch {
			case req.Message == "What is your name?":
				return mcptest.Accept(map[string]any{"name": "Alice"})
			case strings.HasSuffix(req.Message, "What is your email?"):
				return mcptest.Accept(map[string]any{"email": "alice@example.com"})
			case strings.HasPrefix(req.Message, "Transfer "):
				return mcptest.Accept(map[string]any{"confirm": true})
			case req.Message == "Who are you?" && elicitation != nil:
				return mcptest.Accept(elicitation)
			}
			return nil, fmt.Errorf("unexpected question %q", req.Message)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func at(ts *httptest.Server) mcptest.Target { return mcptest.URL(ts.URL, ts.Client()) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var transferArgs = map[string]any{"to": "bob", "amount": 25.5}

// onboard drives onboard_user through target and checks its two
// questions, in order, one per round; it returns the result.
func onboard(t *testing.T, target mcptest.Target) *mcptest.ToolResult {
	t.Helper()
	res, err := testClient(t, target, nil).CallTool(testContext(t), "onboard_user", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Text() != "Welcome aboard, Alice <alice@example.com>" {
		t.Fatalf("result %q (isError %v)", res.Text(), res.IsError)
	}
	rounds := res.Exchange.Rounds
	if len(rounds) != 3 {
		t.Fatalf("%d rounds, want 3", len(rounds))
	}
	for i, want := range []string{"What is your name?", "Thanks, Alice. What is your email?"} {
		if irs := rounds[i].InputRequests; len(irs) != 1 || irs[0].Elicitation.Message != want {
			t.Fatalf("round %d asks %+v, want %q", i+1, irs, want)
		}
	}
	return res
}

func TestOnboardModernRounds(t *testing.T) {
	res := onboard(t, at(newTestServer(t, testKey)))
	// The first answer rides in round 2's state, and cannot be read there.
	s2 := res.Exchange.Rounds[1].RequestState
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
	onboard(t, mcptest.RoundRobin(at(a), at(b)))
	onboard(t, mcptest.RoundRobin(at(b), at(a)))
}

// test_elicitation, a fixture of the 2025-11-25 requirements, asks one
// question; modern clients get it through one input_required round.
func TestBlockingElicitationModern(t *testing.T) {
	ts := newTestServer(t, testKey)
	ctx := testContext(t)
	args := map[string]any{"message": "Who are you?"}
	res, err := testClient(t, at(ts), map[string]any{"username": "alice", "email": "alice@example.com"}).CallTool(ctx, "test_elicitation", args)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); res.IsError || !strings.HasPrefix(got, "User response: action=accept") || !strings.Contains(got, `"username":"alice"`) || len(res.Exchange.Rounds) != 2 {
		t.Fatalf("result %q after %d rounds", got, len(res.Exchange.Rounds))
	}
	// The answer is validated against the schema the handler sent.
	_, err = testClient(t, at(ts), map[string]any{"username": "alice", "email": "not-an-email"}).CallTool(ctx, "test_elicitation", args)
	var rpcErr *mcptest.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != -32602 || rpcErr.Round != 2 || !strings.Contains(rpcErr.Message, "email") {
		t.Fatalf("invalid answer: %v", err)
	}
}

// transfer runs confirm_transfer through target and checks it moved the
// money; it returns the result.
func transfer(t *testing.T, target mcptest.Target) *mcptest.ToolResult {
	t.Helper()
	res, err := testClient(t, target, nil).CallTool(testContext(t), "confirm_transfer", transferArgs)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.Text() != "Transferred 25.5 to bob" {
		t.Fatalf("transfer: %q (isError %v)", res.Text(), res.IsError)
	}
	return res
}

// replay sends the confirming retry of an earlier transfer again, through
// target, and checks that nothing moved.
func replay(t *testing.T, target mcptest.Target, earlier *mcptest.ToolResult) {
	t.Helper()
	r := earlier.Exchange.Rounds[0]
	res, err := testClient(t, target, nil).CallTool(testContext(t), "confirm_transfer", transferArgs, mcptest.Resume(r.RequestState, r.InputResponses))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Text(), "already used") || len(res.Exchange.Rounds) != 1 {
		t.Fatalf("replay: %q (isError %v)", res.Text(), res.IsError)
	}
}

// A confirmation is redeemable once: replaying the same retry on the same
// instance does not transfer twice.
func TestReplayedConfirmationSameInstance(t *testing.T) {
	ts := at(newTestServer(t, testKey))
	replay(t, ts, transfer(t, ts))
	// A new flow (a new confirmation) transfers again.
	transfer(t, ts)
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
		srv, err := newServerWithLedger(keys, time.Minute, redisfleet.New(rs.Client(t), redisfleet.Options{}).Ledger(), slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(srv)
		t.Cleanup(ts.Close)
		return ts
	}
	a, b := server(), server()
	replay(t, at(b), transfer(t, at(a)))
}

// test_elicitation's round 2 lands on another instance.
func TestBlockingElicitationAlternatingInstances(t *testing.T) {
	a := newTestServer(t, testKey)
	b := newTestServer(t, testKey)
	c := testClient(t, mcptest.RoundRobin(at(a), at(b)), map[string]any{"username": "alice", "email": "alice@example.com"})
	res, err := c.CallTool(testContext(t), "test_elicitation", map[string]any{"message": "Who are you?"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Text(); res.IsError || !strings.HasPrefix(got, "User response: action=accept") || len(res.Exchange.Rounds) != 2 {
		t.Fatalf("result %q after %d rounds", got, len(res.Exchange.Rounds))
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
	srv, err := newServerWithLedger(keys, time.Minute, redisfleet.New(client, redisfleet.Options{}).Ledger(), slog.New(slog.NewTextHandler(logs, nil)))
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
