package main

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// baton-auth refuses a request without its token and serves both
// operations with it; baton-otel serves them and records their spans.
func TestVariants(t *testing.T) {
	urls, _, err := startServers()
	if err != nil {
		t.Fatal(err)
	}
	tr := newTransport(1)
	for _, name := range variantNames {
		t.Run(name, func(t *testing.T) {
			for _, gen := range []string{"nethttp", "raw"} {
				op, done, err := opsFor(gen, tr, urls[name], "confirm", 1)()
				if err != nil {
					t.Fatal(err)
				}
				if err := op(); err != nil {
					t.Fatalf("%s confirm: %v", gen, err)
				}
				done()
				op, done, err = opsFor(gen, tr, urls[name], "echo", 1)()
				if err != nil {
					t.Fatal(err)
				}
				if err := op(); err != nil {
					t.Fatalf("%s echo: %v", gen, err)
				}
				done()
			}
		})
	}
	u, err := url.Parse(urls["baton-auth"])
	if err != nil || bearerOf(u) == "" {
		t.Fatalf("baton-auth's URL carries no token: %s", urls["baton-auth"])
	}
	req, err := http.NewRequest(http.MethodPost, strings.Split(urls["baton-auth"], "#")[0], strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(res.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Fatalf("without a token: %d %q, want 401 with a Bearer challenge", res.StatusCode, res.Header.Get("WWW-Authenticate"))
	}
	req.Header.Set("Authorization", "Bearer "+bearerOf(u)+"x")
	req.Body = http.NoBody
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("with a bad signature: %d, want 401", res.StatusCode)
	}

	srv, tp, exp, err := newBatonOtel()
	if err != nil {
		t.Fatal(err)
	}
	otelURL, err := listen(srv)
	if err != nil {
		t.Fatal(err)
	}
	op, done, err := opsFor("raw", tr, otelURL, "confirm", 1)()
	if err != nil {
		t.Fatal(err)
	}
	defer done()
	if err := op(); err != nil {
		t.Fatal(err)
	}
	if err := tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := exp.spans.Load(); n < 2 {
		t.Fatalf("a two-round flow recorded %d spans, want at least one per request", n)
	}
}

// BenchmarkVariants is BenchmarkServers for plain Baton and its variants,
// in process: the allocations and CPU per operation that a cached JWT and
// recorded tracing add (baton-auth's row includes setting its
// Authorization header on the request, a few allocations of the
// benchmark's own).
//
//	go test -run '^$' -bench Variants -benchmem .
func BenchmarkVariants(b *testing.B) {
	handlers, _, err := newHandlers()
	if err != nil {
		b.Fatal(err)
	}
	auth := handlers["baton-auth"].(withToken)
	withAuth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+auth.token)
		auth.ServeHTTP(w, r)
	})
	echoBody := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` + metaJSON + `}}`)
	round1 := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"confirm","arguments":{"id":42},` + metaJSON + `}}`)
	round2Head := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{"id":42},` +
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"`)
	round2Tail := []byte(`",` + metaJSON + `}}`)
	for _, v := range []struct {
		name string
		h    http.Handler
	}{{"baton", handlers["baton"]}, {"baton-auth", withAuth}, {"baton-otel", handlers["baton-otel"]}} {
		b.Run(v.name+"/echo", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if out := serveOnce(v.h, "echo", echoBody); !bytes.Contains(out, []byte(`"text":"hello"`)) {
					b.Fatalf("echo: %.300s", out)
				}
			}
		})
		b.Run(v.name+"/confirm", func(b *testing.B) {
			b.ReportAllocs()
			var body []byte
			for b.Loop() {
				out := serveOnce(v.h, "confirm", round1)
				state := stateIn(out)
				if state == nil {
					b.Fatalf("round 1: %.300s", out)
				}
				body = append(append(append(body[:0], round2Head...), state...), round2Tail...)
				if out := serveOnce(v.h, "confirm", body); !bytes.Contains(out, []byte(`"text":"confirmed"`)) {
					b.Fatalf("round 2: %.300s", out)
				}
			}
		})
	}
}
