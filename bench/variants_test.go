package main

import (
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
