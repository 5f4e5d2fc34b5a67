package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/lambda"
	"github.com/baton-mcp/baton/mcptest"
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
			instances := 0
			// Each request is a payload invoked on a new instance, as the
			// runtime would deliver it to a cold function.
			runtime := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				instances++
				srv, trigger, err := fromEnv(vars, discard)
				if err != nil {
					t.Fatal(err)
				}
				lh, err := lambda.NewHandler(srv, trigger)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(r.Body)
				if err != nil {
					t.Fatal(err)
				}
				out, err := lh.Invoke(r.Context(), payload(t, trigger, r.Header, body))
				if err != nil {
					t.Fatalf("Invoke: %v", err)
				}
				status, contentType, resp := response(t, trigger, out)
				w.Header().Set("Content-Type", contentType)
				w.WriteHeader(status)
				_, _ = w.Write(resp)
			})
			c, err := mcptest.New(mcptest.Handler(runtime), &mcptest.Options{
				Elicitation: func(ctx context.Context, req *elicit.Request) (*elicit.Result, error) {
					return mcptest.Accept(map[string]any{"name": "Grace"})
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.CallTool(context.Background(), "greet", nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.StructuredContent) != `{"greeting":"Hello, Grace!"}` || !strings.Contains(res.Text(), "Hello, Grace!") {
				t.Fatalf("round 2: %s, %q", res.StructuredContent, res.Text())
			}
			if len(res.Exchange.Rounds) != 2 || instances != 2 {
				t.Fatalf("%d rounds on %d instances, want 2 on 2", len(res.Exchange.Rounds), instances)
			}
			for i, r := range res.Exchange.Rounds {
				if r.Status != http.StatusOK {
					t.Errorf("round %d: status %d", i+1, r.Status)
				}
			}
		})
	}
}

// payload is the event the trigger's runtime would deliver for a request
// with header and body.
func payload(t *testing.T, trigger lambda.Trigger, header http.Header, body []byte) []byte {
	t.Helper()
	headers := map[string]string{}
	for name, vs := range header {
		headers[strings.ToLower(name)] = strings.Join(vs, ",")
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

// response returns the status, Content-Type and body of what the handler
// gave the runtime: a JSON response, or for the streaming mode a JSON
// prelude, eight zero bytes and the body.
func response(t *testing.T, trigger lambda.Trigger, out []byte) (int, string, []byte) {
	t.Helper()
	var head struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
	}
	if trigger != lambda.TriggerFunctionURLStream {
		if err := json.Unmarshal(out, &head); err != nil {
			t.Fatalf("response %s: %v", out, err)
		}
		return head.StatusCode, head.Headers["Content-Type"], []byte(head.Body)
	}
	prelude, body, ok := bytes.Cut(out, make([]byte, 8))
	if !ok {
		t.Fatalf("streamed response without a prelude: %q", out)
	}
	if err := json.Unmarshal(prelude, &head); err != nil {
		t.Fatalf("prelude %q: %v", prelude, err)
	}
	return head.StatusCode, head.Headers["Content-Type"], body
}
