package main

import (
	"bytes"
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
		{"function URL, streaming", map[string]string{"BATON_STATE_KEY": testKey, "BATON_LAMBDA_EVENT": "url-stream"}, lambda.TriggerFunctionURLStream, ""},
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
// built from the same environment, in each mode BATON_LAMBDA_EVENT
// chooses, through the handler main gives the runtime.
func TestGreetAcrossInstances(t *testing.T) {
	for _, mode := range []string{"url", "url-stream", "httpapi"} {
		t.Run(mode, func(t *testing.T) {
			vars := env(map[string]string{"BATON_STATE_KEY": testKey, "BATON_ALLOWED_HOSTS": testDomain, "BATON_LAMBDA_EVENT": mode})
			call := func(extra map[string]any) map[string]json.RawMessage {
				t.Helper()
				srv, trigger, err := fromEnv(vars, discard)
				if err != nil {
					t.Fatal(err)
				}
				lh, err := lambda.NewHandler(srv, trigger)
				if err != nil {
					t.Fatal(err)
				}
				out, err := lh.Invoke(context.Background(), payload(t, trigger, greetCall(extra)))
				if err != nil {
					t.Fatalf("Invoke: %v", err)
				}
				status, body := response(t, trigger, out)
				if status != 200 {
					t.Fatalf("status %d: %s", status, body)
				}
				var res struct {
					Result map[string]json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal(body, &res); err != nil || res.Result == nil {
					t.Fatalf("response %s", body)
				}
				return res.Result
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
			if string(r2["structuredContent"]) != `{"greeting":"Hello, Grace!"}` || !strings.Contains(string(r2["content"]), `Hello, Grace!`) {
				t.Fatalf("round 2: %s, %s", r2["structuredContent"], r2["content"])
			}
		})
	}
}

// greetCall is the JSON-RPC body of a greet call with extra params.
func greetCall(extra map[string]any) []byte {
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
	return body
}

// payload is the event the trigger's runtime would deliver for body.
func payload(t *testing.T, trigger lambda.Trigger, body []byte) []byte {
	t.Helper()
	headers := map[string]string{
		"content-type": "application/json", "accept": "application/json, text/event-stream",
		"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "greet",
	}
	var ev any
	if trigger == lambda.TriggerHTTPAPI {
		ev = events.APIGatewayV2HTTPRequest{
			Version: "2.0", RouteKey: "POST /mcp", RawPath: "/mcp", Headers: headers,
			RequestContext: events.APIGatewayV2HTTPRequestContext{
				DomainName: testDomain,
				HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1", SourceIP: "203.0.113.24"},
			},
			Body: string(body),
		}
	} else {
		ev = events.LambdaFunctionURLRequest{
			Version: "2.0", RawPath: "/mcp", Headers: headers,
			RequestContext: events.LambdaFunctionURLRequestContext{
				DomainName: testDomain,
				HTTP:       events.LambdaFunctionURLRequestContextHTTPDescription{Method: "POST", Path: "/mcp", Protocol: "HTTP/1.1", SourceIP: "203.0.113.24"},
			},
			Body: string(body),
		}
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// response returns the status and body of what the handler gave the
// runtime: a JSON response, or for the streaming mode a JSON prelude,
// eight zero bytes and the body.
func response(t *testing.T, trigger lambda.Trigger, out []byte) (int, []byte) {
	t.Helper()
	var head struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
	}
	if trigger != lambda.TriggerFunctionURLStream {
		if err := json.Unmarshal(out, &head); err != nil {
			t.Fatalf("response %s: %v", out, err)
		}
		return head.StatusCode, []byte(head.Body)
	}
	prelude, body, ok := bytes.Cut(out, make([]byte, 8))
	if !ok {
		t.Fatalf("streamed response without a prelude: %q", out)
	}
	if err := json.Unmarshal(prelude, &head); err != nil {
		t.Fatalf("prelude %q: %v", prelude, err)
	}
	return head.StatusCode, body
}
