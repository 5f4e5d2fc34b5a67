// Command serverless is a Baton MCP server run as an AWS Lambda function.
// Its one tool, greet, asks the user's name with a form and greets them: a
// two-round Multi Round-Trip Request in which any instance of the function
// may serve either round.
//
// Configuration (environment):
//
//	BATON_STATE_KEY      the requestState key, at least 32 bytes (required:
//	                     every instance must share it)
//	BATON_ALLOWED_HOSTS  comma-separated Host values to accept, for example
//	                     the function URL's domain (recommended: without it
//	                     any Host is accepted)
//	BATON_LAMBDA_EVENT   how the function is invoked, which must match its
//	                     configuration in AWS:
//	                     "url"        function URL, InvokeMode BUFFERED (the
//	                                  default, as in AWS)
//	                     "url-stream" function URL, InvokeMode RESPONSE_STREAM:
//	                                  progress and log notifications reach
//	                                  the client as they happen
//	                     "httpapi"    API Gateway HTTP API, payload format 2.0
//
// Build for the provided.al2023 runtime (needed for "url-stream"):
//
//	GOOS=linux GOARCH=arm64 go build -tags lambda.norpc -o bootstrap ./serverless  # in examples/
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/lambda"
	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/redisfleet"
	"github.com/baton-mcp/baton/server"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	srv, trigger, err := fromEnv(os.Getenv, log)
	if err != nil {
		log.Error("serverless: " + err.Error())
		os.Exit(1)
	}
	if err := lambda.Start(srv, trigger); err != nil {
		log.Error("serverless: " + err.Error())
		os.Exit(1)
	}
}

// fromEnv builds the server and chooses the trigger from the environment.
func fromEnv(getenv func(string) string, log *slog.Logger) (*server.Server, lambda.Trigger, error) {
	event := getenv("BATON_LAMBDA_EVENT")
	if event == "" {
		event = string(lambda.TriggerFunctionURL)
	}
	trigger, err := lambda.ParseTrigger(event)
	if err != nil {
		return nil, "", fmt.Errorf("BATON_LAMBDA_EVENT: %w", err)
	}
	keys, err := stateKeys(getenv("BATON_STATE_KEY"))
	if err != nil {
		return nil, "", err
	}
	hosts := allowedHosts(getenv("BATON_ALLOWED_HOSTS"))
	if len(hosts) == 0 {
		log.Warn("BATON_ALLOWED_HOSTS is not set: requests for any Host are accepted")
	}
	lg, err := legacyFromEnv(getenv("BATON_REDIS_URL"))
	if err != nil {
		return nil, "", err
	}
	srv, err := newServer(keys, hosts, log, lg)
	if err != nil {
		return nil, "", err
	}
	return srv, trigger, nil
}

// stateKeys builds the key ring from BATON_STATE_KEY; the key ID is derived
// from the key, so every instance names it the same way. A function has
// many instances, so the key is required.
func stateKeys(secret string) (*mrtr.KeyRing, error) {
	if secret == "" {
		return nil, fmt.Errorf("BATON_STATE_KEY is required: every instance must share the requestState key")
	}
	if len(secret) < mrtr.MinKeySize {
		return nil, fmt.Errorf("BATON_STATE_KEY is %d bytes; at least %d are required", len(secret), mrtr.MinKeySize)
	}
	sum := sha256.Sum256([]byte(secret))
	return mrtr.NewKeyRing(mrtr.Key{ID: "k-" + hex.EncodeToString(sum[:6]), Secret: []byte(secret)})
}

// allowedHosts splits a comma-separated list, dropping empty entries.
func allowedHosts(list string) []string {
	var hosts []string
	for _, h := range strings.Split(list, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hosts = append(hosts, h)
		}
	}
	return hosts
}

// greetArgs are greet's arguments: none.
type greetArgs struct{}

// greeting is greet's result (structuredContent, and a text block holding
// the same JSON).
type greeting struct {
	Greeting string `json:"greeting" jsonschema:"the greeting for the user"`
}

// newServer returns the server with its greet tool.
// legacyFromEnv serves 2025-11-25 clients too when BATON_REDIS_URL is
// set (redis://host:port/db or unix:///path): their sessions, their
// calls' events and the calls that wait for their users live in Redis,
// since each invocation may meet another instance, and nothing may run
// once an invocation has answered. So a call parks as soon as its
// question is out (legacy.Options.HoldFor negative: the invocation
// returns the question), and an answer runs the call's next step before
// it is acknowledged; the client gets it when it resumes the call's
// stream (GET with Last-Event-ID). Without it, nil: 2026-07-28 only.
func legacyFromEnv(url string) (server.LegacyAdapter, error) {
	if url == "" {
		return nil, nil
	}
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("BATON_REDIS_URL: %w", err)
	}
	opts.ContextTimeoutEnabled = true
	fleet := redisfleet.New(redis.NewClient(opts), redisfleet.Options{Prefix: "baton:"})
	return legacy.New(&legacy.Options{Store: fleet.Sessions(), HoldFor: -1}), nil
}

func newServer(keys *mrtr.KeyRing, hosts []string, log *slog.Logger, lg server.LegacyAdapter) (*server.Server, error) {
	srv, err := server.New(mcp.Implementation{Name: "baton-serverless", Version: "1.0.0"},
		&server.Options{StateKeys: keys, AllowedHosts: hosts, Logger: log, Legacy: lg})
	if err != nil {
		return nil, err
	}
	names, err := elicit.NewSchema(elicit.String("name").Title("Your name").MinLength(1).Required())
	if err != nil {
		return nil, err
	}
	err = server.AddTool(srv, server.Tool{Name: "greet", Description: "Asks the user's name, then greets them"},
		func(ctx context.Context, req *server.ToolRequest, _ greetArgs) (greeting, error) {
			// The first request ends here with input_required (the
			// question under key "name"); the retry, on any instance,
			// gets the answer.
			res, err := req.CreateFormElicitation(ctx, "What is your name?", names, server.WithKey("name"))
			if err != nil {
				return greeting{}, err
			}
			var a struct {
				Name string `json:"name"`
			}
			if res.Decode(&a) != nil { // declined or cancelled
				return greeting{}, errors.New("No name given")
			}
			return greeting{Greeting: "Hello, " + a.Name + "!"}, nil
		})
	if err != nil {
		return nil, err
	}
	return srv, nil
}
