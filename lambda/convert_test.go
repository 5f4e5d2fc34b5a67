package lambda

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/baton-mcp/baton/mcp"
)

// uploadBody is the binary body of the recorded upload events.
var uploadBody = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 0x0d, 0xff, 0xfe, 0x80, 0x7f}

type ctxKey struct{}

// seen is what a handler saw of a request.
type seen struct {
	req  *http.Request
	body []byte
}

func recorder(s *seen, then http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.req = r
		s.body, _ = io.ReadAll(r.Body)
		if then != nil {
			then(w, r)
		}
	})
}

func TestRequestConversion(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var s seen
			ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), ctxKey{}, "invocation"), time.Minute)
			defer cancel()
			res := k.serve(t, ctx, recorder(&s, nil), k.upload, nil)
			if res.Status != http.StatusOK {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
			r := s.req
			prefix := ""
			wantHost, wantIP := urlDomain, "203.0.113.24"
			if k.trigger == TriggerHTTPAPI {
				prefix, wantHost, wantIP = "/prod", "r2d2c3po4b.execute-api.eu-west-1.amazonaws.com", "198.51.100.7"
			}
			checks := []struct{ what, got, want string }{
				{"Method", r.Method, http.MethodPut},
				{"EscapedPath", r.URL.EscapedPath(), prefix + "/files/a%2Fb/upload"},
				{"Path", r.URL.Path, prefix + "/files/a/b/upload"},
				{"RawQuery", r.URL.RawQuery, "tag=x&tag=y&note=hello%20world"},
				{"RequestURI", r.RequestURI, prefix + "/files/a%2Fb/upload?tag=x&tag=y&note=hello%20world"},
				{"Host", r.Host, wantHost},
				{"RemoteAddr", r.RemoteAddr, wantIP + ":0"},
				{"Proto", r.Proto, "HTTP/1.1"},
				{"Content-Type", r.Header.Get("Content-Type"), "application/octet-stream"},
				{"X-Custom", r.Header.Get("X-Custom"), "value1,value2"},
				{"X-Forwarded-Proto", r.Header.Get("X-Forwarded-Proto"), "https"},
				{"Cookie", r.Header.Get("Cookie"), "session=9f2c1e; theme=dark"},
				{"Content-Length header", r.Header.Get("Content-Length"), "16"}, // kept, as net/http does
				{"Host header", r.Header.Get("Host"), ""},                       // r.Host, as net/http does
				{"context value", r.Context().Value(ctxKey{}).(string), "invocation"},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
				}
			}
			if got := r.URL.Query()["tag"]; !slices.Equal(got, []string{"x", "y"}) {
				t.Errorf("query tag = %q, want [x y]", got)
			}
			if c, err := r.Cookie("theme"); err != nil || c.Value != "dark" {
				t.Errorf("cookie theme = %v, %v", c, err)
			}
			if r.ContentLength != int64(len(uploadBody)) || !bytes.Equal(s.body, uploadBody) {
				t.Errorf("body = %x (ContentLength %d), want %x", s.body, r.ContentLength, uploadBody)
			}
			if _, ok := r.Context().Deadline(); !ok {
				t.Error("the invocation's deadline was lost")
			}
			switch k.trigger {
			case TriggerFunctionURL, TriggerFunctionURLStream:
				ev, ok := FunctionURLRequest(r.Context())
				if !ok || ev.RequestContext.Authorizer == nil || ev.RequestContext.Authorizer.IAM.UserARN != "arn:aws:iam::111122223333:user/example-user" {
					t.Errorf("FunctionURLRequest = %+v, %v", ev, ok)
				}
				if ok && (!ev.IsBase64Encoded || ev.Body != "iVBORw0KGgoAAAAN//6Afw==" || len(ev.Cookies) != 2) {
					t.Errorf("FunctionURLRequest is not the event as delivered: body %q (base64 %v), cookies %q", ev.Body, ev.IsBase64Encoded, ev.Cookies)
				}
				if _, ok := HTTPAPIRequest(r.Context()); ok {
					t.Error("HTTPAPIRequest found a function URL event")
				}
			case TriggerHTTPAPI:
				ev, ok := HTTPAPIRequest(r.Context())
				if !ok || ev.RequestContext.Stage != "prod" || ev.RequestContext.Authorizer.JWT.Claims["sub"] != "user-42" {
					t.Errorf("HTTPAPIRequest = %+v, %v", ev, ok)
				}
				if _, ok := FunctionURLRequest(r.Context()); ok {
					t.Error("FunctionURLRequest found an HTTP API event")
				}
			}
		})
	}
}

func TestRequestEdgeCases(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var s seen
			res := k.serve(t, context.Background(), recorder(&s, nil), k.upload, func(f *fields) {
				*f.Method = http.MethodGet
				*f.Body, *f.Base64 = "", false
				delete(f.Headers, "content-length")
				*f.Cookies = nil
				f.Headers["cookie"] = "a=1"
			})
			if res.Status != http.StatusOK {
				t.Fatalf("status %d", res.Status)
			}
			if s.req.Body != http.NoBody || s.req.ContentLength != 0 {
				t.Errorf("empty body: %v, ContentLength %d", s.req.Body, s.req.ContentLength)
			}
			if got := s.req.Header.Get("Cookie"); got != "a=1" {
				t.Errorf("Cookie = %q, want the header's a=1", got)
			}

			res = k.serve(t, context.Background(), recorder(&s, nil), k.upload, func(f *fields) {
				*f.Domain = ""
				f.Headers["cookie"] = "a=1"
			})
			if res.Status != http.StatusOK || s.req.Host != uploadHost(k) {
				t.Errorf("no domainName: status %d, Host %q, want the host header %q", res.Status, s.req.Host, uploadHost(k))
			}
			if got := s.req.Header.Get("Cookie"); got != "a=1; session=9f2c1e; theme=dark" {
				t.Errorf("Cookie = %q, want the header's and the list's", got)
			}
		})
	}
}

// uploadHost returns the host header of a kind's upload event.
func uploadHost(k kind) string {
	if k.trigger == TriggerHTTPAPI {
		return "r2d2c3po4b.execute-api.eu-west-1.amazonaws.com"
	}
	return urlDomain
}

func TestResponseConversion(t *testing.T) {
	png := uploadBody
	cases := []struct {
		name    string
		method  string
		h       http.HandlerFunc
		status  int
		headers map[string]string
		cookies []string
		body    []byte
		base64  bool
	}{
		{
			name: "binary with multi-value headers and cookies",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				w.Header().Add("X-Multi", "a")
				w.Header().Add("X-Multi", "b")
				http.SetCookie(w, &http.Cookie{Name: "sid", Value: "42", Path: "/", HttpOnly: true})
				http.SetCookie(w, &http.Cookie{Name: "theme", Value: "light"})
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write(png)
			},
			status:  http.StatusCreated,
			headers: map[string]string{"Content-Type": "image/png", "X-Multi": "a,b"},
			cookies: []string{"sid=42; Path=/; HttpOnly", "theme=light"},
			body:    png, base64: true,
		},
		{
			name: "JSON text",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"ok":"é<>"}`)
			},
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "application/json"},
			body:    []byte(`{"ok":"é<>"}`),
		},
		{
			name: "text that is not UTF-8",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
				_, _ = w.Write([]byte("caf\xe9"))
			},
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "text/plain; charset=iso-8859-1"},
			body:    []byte("caf\xe9"), base64: true,
		},
		{
			name: "compressed text",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write([]byte{0x1f, 0x8b, 8, 0})
			},
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "application/json", "Content-Encoding": "gzip"},
			body:    []byte{0x1f, 0x8b, 8, 0}, base64: true,
		},
		{
			name:    "sniffed content type",
			h:       func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "<!DOCTYPE html><p>hi") },
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "text/html; charset=utf-8"},
			body:    []byte("<!DOCTYPE html><p>hi"),
		},
		{
			name:    "nothing written",
			h:       func(w http.ResponseWriter, r *http.Request) {},
			status:  http.StatusOK,
			headers: map[string]string{},
		},
		{
			name: "no content",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusNoContent)
				if _, err := w.Write([]byte("x")); !errors.Is(err, http.ErrBodyNotAllowed) {
					panic("write after 204 accepted")
				}
			},
			status:  http.StatusNoContent,
			headers: map[string]string{},
		},
		{
			name:   "HEAD",
			method: http.MethodHead,
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				_, _ = io.WriteString(w, "body")
			},
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "text/plain"},
		},
		{
			name: "headers changed after WriteHeader, informational status",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusEarlyHints)
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(http.StatusAccepted)
				w.Header().Set("X-Late", "ignored")
				w.WriteHeader(http.StatusTeapot)
				_, _ = io.WriteString(w, "ok")
			},
			status:  http.StatusAccepted,
			headers: map[string]string{"Content-Type": "text/plain"},
			body:    []byte("ok"),
		},
		{
			name: "flushed stream",
			h: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				rc := http.NewResponseController(w)
				for _, ev := range []string{"one", "two"} {
					_, _ = io.WriteString(w, "data: "+ev+"\n\n")
					if err := rc.Flush(); err != nil {
						panic(err)
					}
				}
			},
			status:  http.StatusOK,
			headers: map[string]string{"Content-Type": "text/event-stream"},
			body:    []byte("data: one\n\ndata: two\n\n"),
		},
		{
			name:    "invalid status",
			h:       func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(42) },
			status:  http.StatusInternalServerError,
			headers: map[string]string{},
		},
	}
	for _, k := range kinds {
		for _, tc := range cases {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				res := k.serve(t, context.Background(), tc.h, k.upload, func(f *fields) {
					if tc.method != "" {
						*f.Method = tc.method
					}
				})
				if res.Status != tc.status {
					t.Errorf("status = %d, want %d", res.Status, tc.status)
				}
				if !equalMaps(res.Headers, tc.headers) {
					t.Errorf("headers = %q, want %q", res.Headers, tc.headers)
				}
				if !slices.Equal(res.Cookies, tc.cookies) {
					t.Errorf("cookies = %q, want %q", res.Cookies, tc.cookies)
				}
				// A stream carries bytes; a buffered response carries text
				// or base64 in JSON.
				if want := tc.base64 && !k.streaming(); res.Base64 != want {
					t.Errorf("isBase64Encoded = %v, want %v", res.Base64, want)
				}
				if got := res.decoded(t); !bytes.Equal(got, tc.body) {
					t.Errorf("body = %q, want %q", got, tc.body)
				}
			})
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestHandlerFailures: a panicking handler gets 500, and a write after the
// handler returned is refused rather than racing with the response.
func TestHandlerFailures(t *testing.T) {
	var logs bytes.Buffer
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			res := k.serve(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "partial")
				panic("boom")
			}), k.upload, nil)
			wantRPCError(t, res, http.StatusInternalServerError, mcp.InternalError)
			if got := logs.String(); !strings.Contains(got, "panic=boom") || !strings.Contains(got, "TestHandlerFailures") {
				t.Errorf("the panic was not logged with its stack: %s", got)
			}
			logs.Reset()

			res = k.serve(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				panic(http.ErrAbortHandler)
			}), k.upload, nil)
			wantRPCError(t, res, http.StatusInternalServerError, mcp.InternalError)
			if logs.Len() != 0 {
				t.Errorf("http.ErrAbortHandler was logged: %s", logs.String())
			}

			var late http.ResponseWriter
			res = k.serve(t, context.Background(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				late = w
				_, _ = io.WriteString(w, "done")
			}), k.upload, nil)
			if _, err := late.Write([]byte("late")); !errors.Is(err, errWriteAfterReturn) {
				t.Errorf("write after return: %v", err)
			}
			if res.Body != "done" {
				t.Errorf("body = %q", res.Body)
			}
		})
	}
}

// TestMalformedEvents: events that are not usable requests get 400 with a
// JSON-RPC error, never a Lambda error, and the handler does not run.
func TestMalformedEvents(t *testing.T) {
	cases := []struct {
		name string
		file string // "" for the kind's round-1 event
		edit func(*fields)
		want string
	}{
		{"API Gateway REST (v1) event", "rest-api-v1.json", nil, "no requestContext.http.method"},
		{"not base64", "", func(f *fields) { *f.Body, *f.Base64 = "{not base64}", true }, "not base64"},
		{"relative path", "", func(f *fields) { *f.RawPath = "mcp" }, "not an absolute path"},
		{"no path", "", func(f *fields) { *f.RawPath = "" }, "not an absolute path"},
		{"bad method", "", func(f *fields) { *f.Method = "GE T" }, `invalid method "GE T"`},
		{"header injection", "", func(f *fields) { f.Headers["x-evil"] = "a\r\nX-Admin: 1" }, "control character"},
		{"bad header name", "", func(f *fields) { f.Headers["bad name"] = "x" }, "header name"},
		{"cookie injection", "", func(f *fields) { *f.Cookies = []string{"a=1\nb"} }, "cookie"},
		{"no host", "", func(f *fields) { *f.Domain = ""; delete(f.Headers, "host") }, "no requestContext.domainName"},
		{"bad host", "", func(f *fields) { *f.Domain = "evil.example/x" }, "not a valid host"},
		{"bad escape", "", func(f *fields) { *f.RawPath = "/%zz" }, `invalid URL escape "%zz"`},
		{"query in path", "", func(f *fields) { *f.RawPath = "/mcp?x=1" }, "has a query or fragment"},
		{"fragment in query", "", func(f *fields) { *f.RawPath = "/mcp"; f.setQuery("a=1#b") }, "has a fragment"},
		{"path into the host", "", func(f *fields) { *f.RawPath = ".attacker.example/mcp" }, "not an absolute path"},
		{"user info in host", "", func(f *fields) { *f.Domain = "user@evil.example" }, "not a valid host"},
	}
	for _, k := range kinds {
		for _, tc := range cases {
			t.Run(k.name+"/"+tc.name, func(t *testing.T) {
				file := tc.file
				if file == "" {
					file = k.round1
				}
				ran := false
				h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true })
				res := k.serve(t, context.Background(), h, file, tc.edit)
				e := wantRPCError(t, res, http.StatusBadRequest, mcp.InvalidRequest)
				if !strings.Contains(e.Message, tc.want) {
					t.Errorf("message %q does not say %q", e.Message, tc.want)
				}
				if ran {
					t.Error("the handler ran")
				}
			})
		}
	}
}

// TestNewHandler serves recorded payloads as bytes, as the Lambda runtime
// delivers them, including payloads that are not events at all.
func TestNewHandler(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			lh, err := NewHandler(newServer(t, k.domain), k.trigger)
			if err != nil {
				t.Fatal(err)
			}
			out, err := lh.Invoke(context.Background(), readFile(t, k.round1))
			if err != nil {
				t.Fatalf("Invoke: %v", err)
			}
			res := decodeResponse(t, k, out)
			if res.Status != http.StatusOK || !strings.Contains(res.Body, `"resultType":"input_required"`) {
				t.Fatalf("round 1: %d %s", res.Status, res.Body)
			}

			for _, payload := range []string{`[]`, `{"requestContext":"x"}`, `null`, `{}`, `"a string"`} {
				out, err := lh.Invoke(context.Background(), []byte(payload))
				if err != nil {
					t.Fatalf("Invoke(%q) returned a Lambda error: %v", payload, err)
				}
				wantRPCError(t, decodeResponse(t, k, out), http.StatusBadRequest, mcp.InvalidRequest)
			}
			// Lambda only delivers JSON; what is not JSON at all is refused
			// by the runtime before a streaming adapter sees it (documented).
			for _, payload := range []string{`not json`, ``} {
				out, err := lh.Invoke(context.Background(), []byte(payload))
				if k.streaming() {
					if err == nil {
						t.Errorf("Invoke(%q) = %q, want the runtime's decoding error", payload, out)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Invoke(%q) returned a Lambda error: %v", payload, err)
				}
				wantRPCError(t, decodeResponse(t, k, out), http.StatusBadRequest, mcp.InvalidRequest)
			}
		})
	}
	if _, err := NewHandler(http.NotFoundHandler(), "alb"); err == nil {
		t.Error("NewHandler accepted an unknown trigger")
	}
	if err := Start(http.NotFoundHandler(), "rest"); err == nil {
		t.Error("Start accepted an unknown trigger")
	}
}

func decodeResponse(t testing.TB, k kind, b []byte) result {
	t.Helper()
	switch k.trigger {
	case TriggerFunctionURLStream:
		r, err := readStream(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("response %q: %v", b, err)
		}
		return r
	case TriggerFunctionURL:
		var r events.LambdaFunctionURLResponse
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("response %s: %v", b, err)
		}
		return result{r.StatusCode, r.Headers, r.Cookies, r.Body, r.IsBase64Encoded}
	}
	var r events.APIGatewayV2HTTPResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("response %s: %v", b, err)
	}
	return result{r.StatusCode, r.Headers, r.Cookies, r.Body, r.IsBase64Encoded}
}

func TestParseTrigger(t *testing.T) {
	for in, want := range map[string]Trigger{"url": TriggerFunctionURL, "url-stream": TriggerFunctionURLStream, "httpapi": TriggerHTTPAPI} {
		if got, err := ParseTrigger(in); err != nil || got != want {
			t.Errorf("ParseTrigger(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "URL", "rest", "alb", "stream"} {
		if _, err := ParseTrigger(in); err == nil {
			t.Errorf("ParseTrigger(%q) succeeded", in)
		}
	}
}

// TestOnlyLambdaImportsAWS keeps aws-lambda-go out of the core packages:
// only this package and examples/serverless may depend on it.
func TestOnlyLambdaImportsAWS(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command(goTool, "list", "-e", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "github.com/baton-mcp/baton/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/baton-mcp/baton/lambda":              true,
		"github.com/baton-mcp/baton/examples/serverless": true,
	}
	checked := 0
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		checked++
		if allowed[pkg] {
			if !strings.Contains(deps, "github.com/aws/aws-lambda-go/") {
				t.Errorf("%s does not depend on aws-lambda-go; is this test still right?", pkg)
			}
			continue
		}
		if strings.Contains(deps, "github.com/aws/aws-lambda-go") {
			t.Errorf("%s depends on aws-lambda-go", pkg)
		}
	}
	if checked < 10 {
		t.Fatalf("go list named only %d packages:\n%s", checked, out)
	}
}
