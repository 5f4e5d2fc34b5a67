package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/lambda"
)

const (
	testKey    = "0123456789abcdef0123456789abcdef-serverless"
	testDomain = "k7xq3mlv2ghd5rb4ytcxw6ozfe0pinua.lambda-url.eu-west-1.on.aws"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		vars map[string]string
		want lambda.Trigger
		err  string
	}{
		{"defaults to function URL", map[string]string{"BATON_STATE_KEY": testKey}, lambda.TriggerFunctionURL, ""},
		{"HTTP API", map[string]string{"BATON_STATE_KEY": testKey, "BATON_LAMBDA_EVENT": "httpapi"}, lambda.TriggerHTTPAPI, ""},
		{"unknown event", map[string]string{"BATON_STATE_KEY": testKey, "BATON_LAMBDA_EVENT": "alb"}, "", "BATON_LAMBDA_EVENT"},
		{"no key", map[string]string{}, "", "BATON_STATE_KEY is required"},
		{"short key", map[string]string{"BATON_STATE_KEY": "short"}, "", "at least 32"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := fromEnv(env(tc.vars), discard)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("trigger %q, err %v; want %q", got, err, tc.want)
			}
		})
	}
	if got := allowedHosts(" a.example , ,b.example:443,"); strings.Join(got, "|") != "a.example|b.example:443" {
		t.Errorf("allowedHosts = %q", got)
	}
}

// TestGreetAcrossInstances runs the two rounds of greet on two instances
// built from the same environment.
func TestGreetAcrossInstances(t *testing.T) {
	vars := env(map[string]string{"BATON_STATE_KEY": testKey, "BATON_ALLOWED_HOSTS": testDomain})
	call := func(extra map[string]any) map[string]json.RawMessage {
		t.Helper()
		srv, _, err := fromEnv(vars, discard)
		if err != nil {
			t.Fatal(err)
		}
		params := map[string]any{
			"name": "greet",
			"_meta": map[string]any{
				"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
				"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}},
			},
		}
		for k, v := range extra {
			params[k] = v
		}
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
		ev := events.LambdaFunctionURLRequest{
			Version: "2.0", RawPath: "/mcp",
			Headers: map[string]string{
				"content-type": "application/json", "accept": "application/json, text/event-stream",
				"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "greet",
			},
			RequestContext: events.LambdaFunctionURLRequestContext{
				DomainName: testDomain,
				HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1", SourceIP: "203.0.113.24"},
			},
			Body: string(body),
		}
		res, err := lambda.FunctionURL(srv)(context.Background(), ev)
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("status %d, err %v: %s", res.StatusCode, err, res.Body)
		}
		var out struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal([]byte(res.Body), &out); err != nil || out.Result == nil {
			t.Fatalf("response %s", res.Body)
		}
		return out.Result
	}
	r1 := call(nil)
	if string(r1["resultType"]) != `"input_required"` {
		t.Fatalf("round 1: %v", r1)
	}
	var state string
	_ = json.Unmarshal(r1["requestState"], &state)
	r2 := call(map[string]any{"requestState": state, "inputResponses": map[string]any{
		"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}},
	}})
	if !strings.Contains(string(r2["content"]), "Hello, Grace!") {
		t.Fatalf("round 2: %s", r2["content"])
	}
}
