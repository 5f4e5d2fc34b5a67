package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
)

// failingLedger fails every redemption the way a ledger whose store is
// unreachable does.
type failingLedger struct{ err error }

func (l failingLedger) Redeem(context.Context, string, time.Time) error { return l.err }

var refRE = regexp.MustCompile(`^Internal error \(ref ([0-9a-f]{8})\): details are in the server log$`)

// TestHandlerErrorExposure: a handler's plain error reaches the client;
// one that wraps a network, context, operating system or ledger failure,
// or that Internal marks, reaches it as a generic message whose reference
// is in the log line that has the detail.
func TestHandlerErrorExposure(t *testing.T) {
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 6379}, Err: os.NewSyscallError("connect", errors.New("connection refused"))}
	_, pathErr := os.Open("/nonexistent/secret/config.yaml")
	for _, tc := range []struct {
		name     string
		err      error
		internal bool
		leak     string // what the client must not read
	}{
		{"plain", errors.New("no account named bob"), false, ""},
		{"formatted", fmt.Errorf("amount %d is over your limit of %d", 900, 500), false, ""},
		{"dial", fmt.Errorf("redis ledger: %w", dialErr), true, "10.0.0.7"},
		{"deadline", fmt.Errorf("call billing: %w", context.DeadlineExceeded), true, "billing"},
		{"file", fmt.Errorf("load: %w", pathErr), true, "/nonexistent/secret"},
		{"marked", Internal(errors.New("SELECT * FROM accounts failed: relation missing")), true, "SELECT"},
		{"joined", errors.Join(errors.New("first"), Internal(errors.New("hidden detail"))), true, "hidden detail"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &syncBuffer{}
			s := newTestServer(t, &Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
			c := newClient(t, s, "")
			mustAddTool(t, s, Tool{Name: "t"}, func(context.Context, *ToolRequest) (*ToolResult, error) { return nil, tc.err })
			if err := s.AddPrompt(Prompt{Name: "p"}, func(context.Context, *PromptRequest) (*PromptResult, error) { return nil, tc.err }); err != nil {
				t.Fatal(err)
			}
			text, isErr := toolText(t, completeResult(t, sendTool(t, c, "t", nil)))
			if !isErr {
				t.Fatalf("tool result %q is not an error", text)
			}
			pe := wantError(t, send(t, c, "prompts/get", map[string]any{"name": "p"}), http.StatusOK, mcp.InternalError)
			if !tc.internal {
				if text != tc.err.Error() || pe.Message != "Internal error: "+tc.err.Error() {
					t.Errorf("plain error: tool text %q, prompt message %q; want its text %q", text, pe.Message, tc.err.Error())
				}
				return
			}
			for _, got := range []string{text, pe.Message} {
				m := refRE.FindStringSubmatch(got)
				if m == nil {
					t.Fatalf("client reads %q, want the generic message", got)
				}
				if strings.Contains(got, tc.leak) {
					t.Errorf("client reads %q", tc.leak)
				}
				if log := logs.String(); !strings.Contains(log, "ref="+m[1]) || !strings.Contains(log, tc.leak) {
					t.Errorf("the log has no line with ref %s and the detail %q:\n%s", m[1], tc.leak, log)
				}
			}
		})
	}
}

// TestLedgerFailureIsInternal: Round.Redeem fails closed on a ledger error,
// and the handler that returns it tells the client nothing of the ledger.
func TestLedgerFailureIsInternal(t *testing.T) {
	f := newMRTRFixture(t)
	ledger := failingLedger{fmt.Errorf("redis ledger: %w", &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: "/run/redis/redis.sock", Net: "unix"}, Err: errors.New("connect: no such file or directory")})}
	form := confirmForm(t, "Pay?")
	var acted bool
	mustAddTool(t, f.s, Tool{Name: "pay"}, func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
		if _, err := req.Elicit(ctx, form, WithKey("confirm")); err != nil {
			return nil, err
		}
		if err := req.Redeem(ctx, ledger); err != nil {
			if errors.Is(err, ErrAlreadyRedeemed) {
				return ErrorResult("already used"), nil
			}
			return nil, err
		}
		acted = true
		return TextResult("paid"), nil
	})
	c := newClient(t, f.s, elicitCaps)
	r1 := wantInputRequired(t, sendTool(t, c, "pay", nil), "confirm")
	res := completeResult(t, sendTool(t, c, "pay", nil, mcptest.Resume(r1.RequestState, map[string]any{"confirm": accept(true)})))
	text, isErr := toolText(t, res)
	if !isErr || refRE.FindString(text) == "" || strings.Contains(text, "redis") || acted {
		t.Fatalf("ledger down: %q (isError %v, acted %v); want the generic message, nothing done", text, isErr, acted)
	}
	if !strings.Contains(f.logs.String(), "/run/redis/redis.sock") {
		t.Errorf("the log lacks the ledger's error:\n%s", f.logs.String())
	}
}

// TestEchoedInputIsClipped: wherever an error names something the peer
// sent (a method, a name, a URI, a cursor, a header, a key), a 40 KB value
// is cut to a few dozen bytes.
func TestEchoedInputIsClipped(t *testing.T) {
	huge := strings.Repeat("z", 40<<10)
	s := newTestServer(t, &Options{AllowedOrigins: []string{"https://app.example"}})
	mustAddTool(t, s, Tool{Name: "strict", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`)},
		func(context.Context, *ToolRequest) (*ToolResult, error) { return TextResult("ok"), nil })
	if err := s.AddResource(Resource{URI: "file:///a", Name: "a"}, noopResource); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, s, "")
	strict := func(opts ...mcptest.CallOption) func() *mcptest.Response {
		return func() *mcptest.Response { return sendTool(t, c, "strict", nil, opts...) }
	}
	for _, tc := range []struct {
		name string
		send func() *mcptest.Response
	}{
		{"method", func() *mcptest.Response { return send(t, c, huge, nil) }},
		{"tool name", func() *mcptest.Response { return sendTool(t, c, huge, nil) }},
		{"cursor", func() *mcptest.Response { return send(t, c, "tools/list", map[string]any{"cursor": huge}) }},
		{"log level", strict(mcptest.WithLogLevel(huge))},
		{"Mcp-Name", strict(mcptest.WithHeader(headerName, huge))},
		{"resource URI", func() *mcptest.Response {
			return send(t, c, "resources/read", map[string]any{"uri": "file:///" + huge})
		}},
		{"argument key", func() *mcptest.Response { return sendTool(t, c, "strict", map[string]any{huge: "x"}) }},
		{"inputResponses key", func() *mcptest.Response {
			return send(t, c, "tools/call", map[string]any{"name": "strict", "inputResponses": json.RawMessage(`{"` + huge + `":{},"` + huge + `":{}}`)})
		}},
		{"Content-Type", strict(mcptest.WithHeader("Content-Type", "text/"+huge))},
		{"Origin", strict(mcptest.WithHeader("Origin", "https://"+huge))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.send()
			body := string(r.Body)
			if !strings.Contains(body, "zzzz") {
				t.Fatalf("status %d: the answer does not name the value at all: %s", r.Status, body)
			}
			if len(body) > 1500 {
				t.Fatalf("status %d: a %d-byte answer echoes the value: %.300s…", r.Status, len(body), body)
			}
		})
	}
}
