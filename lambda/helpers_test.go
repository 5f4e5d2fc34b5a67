package lambda

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server"
)

// testSecret is the state key every instance of the test function shares,
// as a real deployment would through its environment.
const testSecret = "baton-lambda-test-secret-0123456789abcdef"

// The domains of the recorded events.
const (
	urlDomain = "k7xq3mlv2ghd5rb4ytcxw6ozfe0pinua.lambda-url.eu-west-1.on.aws"
	apiDomain = "mcp.example.com"
)

// newServer builds one instance of the function's server, as a cold start
// does: the key ring from the shared secret, the server, the greet tool.
// hosts become AllowedHosts.
func newServer(tb testing.TB, hosts ...string) *server.Server {
	tb.Helper()
	srv, err := buildServer(hosts)
	if err != nil {
		tb.Fatal(err)
	}
	return srv
}

func buildServer(hosts []string) (*server.Server, error) {
	return buildServerWithKey(testSecret, hosts)
}

// buildServerWithKey builds an instance whose state key is secret.
func buildServerWithKey(secret string, hosts []string) (*server.Server, error) {
	ring, err := mrtr.NewKeyRing(mrtr.Key{ID: "k1", Secret: []byte(secret)})
	if err != nil {
		return nil, err
	}
	srv, err := server.New(mcp.Implementation{Name: "baton-lambda-test", Version: "1.0.0"},
		&server.Options{StateKeys: ring, AllowedHosts: hosts, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	ask, err := elicit.NewForm("What is your name?", elicit.String("name").MinLength(1).Required())
	if err != nil {
		return nil, err
	}
	err = srv.AddTool(server.Tool{Name: "greet", Description: "Asks a name, then greets"},
		func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
			answer, err := req.Elicit(ctx, ask, server.WithKey("name"))
			if err != nil {
				return nil, err
			}
			var a struct {
				Name string `json:"name"`
			}
			if answer.Action != elicit.ActionAccept || answer.Decode(&a) != nil {
				return server.ErrorResult("No name given"), nil
			}
			return server.TextResult("Hello, " + a.Name + "!"), nil
		})
	if err != nil {
		return nil, err
	}
	return srv, nil
}

// fields points into a decoded event of either kind, so a test can edit a
// recorded event before serving it.
type fields struct {
	Method  *string
	RawPath *string
	Query   *string
	Domain  *string
	Body    *string
	Base64  *bool
	Headers map[string]string
	Cookies *[]string
}

// setBody replaces the body, keeping the template's encoding, and updates
// content-length.
func (f *fields) setBody(body []byte) {
	if *f.Base64 {
		*f.Body = base64.StdEncoding.EncodeToString(body)
	} else {
		*f.Body = string(body)
	}
	f.Headers["content-length"] = strconv.Itoa(len(body))
}

// setQuery replaces the raw query string.
func (f *fields) setQuery(q string) { *f.Query = q }

// body returns the decoded body.
func (f *fields) body(tb testing.TB) []byte {
	tb.Helper()
	if !*f.Base64 {
		return []byte(*f.Body)
	}
	b, err := base64.StdEncoding.DecodeString(*f.Body)
	if err != nil {
		tb.Fatalf("recorded body: %v", err)
	}
	return b
}

// result is a response of either kind.
type result struct {
	Status  int
	Headers map[string]string
	Cookies []string
	Body    string
	Base64  bool
}

// decoded returns the body, decoded if it was base64.
func (r result) decoded(tb testing.TB) []byte {
	tb.Helper()
	if !r.Base64 {
		return []byte(r.Body)
	}
	b, err := base64.StdEncoding.DecodeString(r.Body)
	if err != nil {
		tb.Fatalf("response body is not base64: %v", err)
	}
	return b
}

// kind is one event kind and its recorded events.
type kind struct {
	name    string
	trigger Trigger
	round1  string // testdata file: round 1 of the greet flow
	upload  string // testdata file: a binary PUT with query, cookies, multi-value header
	domain  string // domainName of round1
	// serve decodes the file into the kind's events type, lets edit change
	// it, and serves it through the kind's adapter around h.
	serve func(tb testing.TB, ctx context.Context, h http.Handler, file string, edit func(*fields)) result
}

var kinds = []kind{
	{name: "function-url", trigger: TriggerFunctionURL, round1: "function-url-round1.json", upload: "function-url-upload.json", domain: urlDomain, serve: serveFunctionURL},
	{name: "function-url-stream", trigger: TriggerFunctionURLStream, round1: "function-url-round1.json", upload: "function-url-upload.json", domain: urlDomain, serve: serveFunctionURLStream},
	{name: "http-api", trigger: TriggerHTTPAPI, round1: "httpapi-round1.json", upload: "httpapi-upload.json", domain: apiDomain, serve: serveHTTPAPI},
}

// streaming reports whether the kind answers with a streaming response.
func (k kind) streaming() bool { return k.trigger == TriggerFunctionURLStream }

func serveFunctionURL(tb testing.TB, ctx context.Context, h http.Handler, file string, edit func(*fields)) result {
	tb.Helper()
	var ev events.LambdaFunctionURLRequest
	load(tb, file, &ev)
	if edit != nil {
		edit(&fields{Method: &ev.RequestContext.HTTP.Method, RawPath: &ev.RawPath, Query: &ev.RawQueryString, Domain: &ev.RequestContext.DomainName,
			Body: &ev.Body, Base64: &ev.IsBase64Encoded, Headers: ev.Headers, Cookies: &ev.Cookies})
	}
	res, err := functionURL(h)(ctx, ev)
	if err != nil {
		tb.Fatalf("FunctionURL returned a Lambda error: %v", err)
	}
	return result{res.StatusCode, res.Headers, res.Cookies, res.Body, res.IsBase64Encoded}
}

// serveFunctionURLStream serves the event through FunctionURLStream and
// reads the whole stream as the runtime would send it: the prelude, eight
// zero bytes, the body.
func serveFunctionURLStream(tb testing.TB, ctx context.Context, h http.Handler, file string, edit func(*fields)) result {
	tb.Helper()
	var ev events.LambdaFunctionURLRequest
	load(tb, file, &ev)
	if edit != nil {
		edit(&fields{Method: &ev.RequestContext.HTTP.Method, RawPath: &ev.RawPath, Query: &ev.RawQueryString, Domain: &ev.RequestContext.DomainName,
			Body: &ev.Body, Base64: &ev.IsBase64Encoded, Headers: ev.Headers, Cookies: &ev.Cookies})
	}
	res, err := functionURLStream(h)(ctx, &ev)
	if err != nil {
		tb.Fatalf("FunctionURLStream returned a Lambda error: %v", err)
	}
	defer res.Close()
	r, err := readStream(res)
	if err != nil {
		tb.Fatalf("reading the stream: %v", err)
	}
	return r
}

// readStream reads a whole streaming response from its io.Reader. A read
// error comes back with what was read before it.
func readStream(stream io.Reader) (result, error) {
	br := bufio.NewReader(stream)
	r, err := readPrelude(br)
	if err != nil {
		return r, err
	}
	body, err := io.ReadAll(br)
	r.Body = string(body)
	return r, err
}

// readPrelude reads the JSON prelude of a streaming response and the eight
// zero bytes that end it.
func readPrelude(br *bufio.Reader) (result, error) {
	line, err := br.ReadBytes(0)
	if err != nil {
		return result{}, fmt.Errorf("no prelude: %w (read %q)", err, line)
	}
	var zeros [7]byte
	if _, err := io.ReadFull(br, zeros[:]); err != nil || zeros != [7]byte{} {
		return result{}, fmt.Errorf("the prelude is not followed by eight zero bytes: %q, %v", zeros, err)
	}
	var p struct {
		StatusCode *int              `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Cookies    []string          `json:"cookies"`
	}
	if err := json.Unmarshal(line[:len(line)-1], &p); err != nil || p.StatusCode == nil {
		return result{}, fmt.Errorf("prelude %q: %v", line, err)
	}
	return result{Status: *p.StatusCode, Headers: p.Headers, Cookies: p.Cookies}, nil
}

func serveHTTPAPI(tb testing.TB, ctx context.Context, h http.Handler, file string, edit func(*fields)) result {
	tb.Helper()
	var ev events.APIGatewayV2HTTPRequest
	load(tb, file, &ev)
	if edit != nil {
		edit(&fields{Method: &ev.RequestContext.HTTP.Method, RawPath: &ev.RawPath, Query: &ev.RawQueryString, Domain: &ev.RequestContext.DomainName,
			Body: &ev.Body, Base64: &ev.IsBase64Encoded, Headers: ev.Headers, Cookies: &ev.Cookies})
	}
	res, err := httpAPI(h)(ctx, ev)
	if err != nil {
		tb.Fatalf("HTTPAPI returned a Lambda error: %v", err)
	}
	return result{res.StatusCode, res.Headers, res.Cookies, res.Body, res.IsBase64Encoded}
}

// readFile returns a recorded event.
func readFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// load decodes a recorded event into v.
func load(tb testing.TB, name string, v any) {
	tb.Helper()
	if err := json.Unmarshal(readFile(tb, name), v); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
}

// rpcError is a JSON-RPC error object as received.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rpcResponse is a JSON-RPC response as received.
type rpcResponse struct {
	ID     json.RawMessage            `json:"id"`
	Result map[string]json.RawMessage `json:"result"`
	Error  *rpcError                  `json:"error"`
}

// parse decodes a plain-JSON response, checking the content type.
func parse(tb testing.TB, r result) rpcResponse {
	tb.Helper()
	if ct := r.Headers["Content-Type"]; ct != "application/json" {
		tb.Errorf("Content-Type = %q, want application/json", ct)
	}
	if r.Base64 {
		tb.Errorf("a JSON response was base64-encoded")
	}
	var out rpcResponse
	if err := json.Unmarshal(r.decoded(tb), &out); err != nil {
		tb.Fatalf("response is not JSON: %v\n%s", err, r.Body)
	}
	return out
}

// wantRPCError checks an error response's status and code.
func wantRPCError(tb testing.TB, r result, status, code int) *rpcError {
	tb.Helper()
	if r.Status != status {
		tb.Errorf("status = %d, want %d; body %s", r.Status, status, r.Body)
	}
	out := parse(tb, r)
	if out.Error == nil {
		tb.Fatalf("want JSON-RPC error %d, got %s", code, r.Body)
	}
	if out.Error.Code != code {
		tb.Errorf("error code = %d, want %d (%s)", out.Error.Code, code, out.Error.Message)
	}
	return out.Error
}

// lambdaBridge is an http.Handler that carries every request through a
// Lambda event of one kind, so that mcptest can drive a function as a
// client would: the kind's recorded round-1 event is the template (request
// context, domain name, source IP, cookies, the runtime's headers); the
// request's method, path, query, headers and body replace the recorded
// ones; the kind's adapter serves the event around a fresh instance (a
// cold start per request); and the adapter's response is written back.
// It keeps every response as the adapter produced it.
type lambdaBridge struct {
	tb       testing.TB
	k        kind
	instance func() http.Handler
	mu       sync.Mutex
	results  []result
}

func newLambdaBridge(tb testing.TB, k kind, instance func() http.Handler) *lambdaBridge {
	return &lambdaBridge{tb: tb, k: k, instance: instance}
}

// edit returns the event edit that puts r in place of the recording.
func requestEdit(r *http.Request, body []byte) func(*fields) {
	return func(f *fields) {
		*f.Method = r.Method
		*f.RawPath = r.URL.Path
		f.setQuery(r.URL.RawQuery)
		for name := range f.Headers {
			if strings.HasPrefix(name, "mcp-") {
				delete(f.Headers, name)
			}
		}
		for name, vs := range r.Header {
			f.Headers[strings.ToLower(name)] = strings.Join(vs, ",")
		}
		f.setBody(body)
	}
}

func (b *lambdaBridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		b.tb.Errorf("reading the request: %v", err)
		return
	}
	res := b.k.serve(b.tb, r.Context(), b.instance(), b.k.round1, requestEdit(r, body))
	b.mu.Lock()
	b.results = append(b.results, res)
	b.mu.Unlock()
	for name, v := range res.Headers {
		w.Header().Set(name, v)
	}
	w.WriteHeader(res.Status)
	_, _ = w.Write(res.decoded(b.tb))
}

// served returns the responses served so far.
func (b *lambdaBridge) served() []result {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]result(nil), b.results...)
}

// bridgeClient returns an mcptest client of the bridge that declares
// elicitation and answers it with answer (nil: no callback).
func bridgeClient(tb testing.TB, b http.Handler, answer func(ctx context.Context, req *elicit.Request) (*elicit.Result, error)) *mcptest.Client {
	tb.Helper()
	c, err := mcptest.New(mcptest.Handler(b), &mcptest.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
		Elicitation:  answer,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
