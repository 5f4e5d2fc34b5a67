package main

// The Baton variants measured beside plain Baton, for what the
// authorization and telemetry work add to a request (issue 23):
//
//   - baton-auth: the same server behind auth.ResourceServer.Protect,
//     verifying a JWT (RS256, keys given inline as a JWKS: no network
//     authorization server) sent by the generator in every request's
//     Authorization header. The token is verified once and then answered
//     from the resource server's cache, as a client reusing its access
//     token is: the cost per request is the cached lookup (the token's
//     SHA-256 and the cache) and the grant in the request's context, plus
//     the principal the MRTR state is bound to.
//   - baton-otel: a server like baton with Options.Telemetry on OpenTelemetry's SDK:
//     a tracer provider with the always-on (recording) sampler and a batch
//     span processor exporting to an exporter that counts and drops the
//     spans, and a meter provider with a manual reader (metrics recorded,
//     never collected).
//
// They are not in serverNames (the default -servers); run.sh names them.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/baton-mcp/baton/auth"
	"github.com/baton-mcp/baton/server"
)

// variantNames are the Baton variants, accepted by -servers beside
// serverNames.
var variantNames = []string{"baton-auth", "baton-otel"}

// benchResource is the resource (the audience) of baton-auth's tokens.
const benchResource = "https://mcp.bench.example/mcp"

// bearerFragment marks the token in a server URL: the generator sends
// "Authorization: Bearer " + the fragment's value.
const bearerFragment = "bearer="

// withToken is a handler whose clients must send token.
type withToken struct {
	http.Handler
	token string
}

// endpointURL is u for name's handler, with the bearer token as its
// fragment when the handler needs one.
func endpointURL(u string, h http.Handler) string {
	if t, ok := h.(withToken); ok {
		return u + "#" + bearerFragment + t.token
	}
	return u
}

// bearerOf returns the token carried in u's fragment, or "".
func bearerOf(u *url.URL) string {
	if len(u.Fragment) > len(bearerFragment) && u.Fragment[:len(bearerFragment)] == bearerFragment {
		return u.Fragment[len(bearerFragment):]
	}
	return ""
}

// addVariants adds the variants' handlers; b is the plain Baton server,
// which baton-auth wraps.
func addVariants(handlers map[string]http.Handler, b *server.Server) error {
	h, err := newBatonAuth(b)
	if err != nil {
		return fmt.Errorf("baton-auth: %w", err)
	}
	handlers["baton-auth"] = h
	o, _, _, err := newBatonOtel()
	if err != nil {
		return fmt.Errorf("baton-otel: %w", err)
	}
	handlers["baton-otel"] = o
	return nil
}

// newBatonAuth returns b behind a resource server that trusts one RSA key
// (given inline), and a token it signed for the generator.
func newBatonAuth(b *server.Server) (withToken, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return withToken{}, err
	}
	enc := base64.RawURLEncoding
	jwks, err := json.Marshal(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "bench-1", "use": "sig", "alg": "RS256",
		"n": enc.EncodeToString(key.N.Bytes()),
		"e": enc.EncodeToString(big.NewInt(int64(key.E)).Bytes()),
	}}})
	if err != nil {
		return withToken{}, err
	}
	const issuer = "https://as.bench.example"
	rs, err := auth.New(context.Background(), auth.Config{
		Resource:             benchResource,
		AuthorizationServers: []string{issuer},
		ScopesSupported:      []string{"mcp"},
		JWKS:                 jwks,
	})
	if err != nil {
		return withToken{}, err
	}
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
		"iss": issuer, "sub": "bench-user", "aud": benchResource, "client_id": "baton-bench",
		"scope": "mcp", "iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix(),
	})
	tok.Header["kid"] = "bench-1"
	signed, err := tok.SignedString(key)
	if err != nil {
		return withToken{}, err
	}
	return withToken{Handler: rs.Protect(b), token: signed}, nil
}

// countingExporter is a span exporter that counts the spans it is given
// and keeps none.
type countingExporter struct{ spans atomic.Int64 }

func (e *countingExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.spans.Add(int64(len(spans)))
	return nil
}

func (e *countingExporter) Shutdown(context.Context) error { return nil }

// newBatonOtel returns a server like baton's with Options.Telemetry recording every
// request's spans and metrics, its tracer provider and its exporter.
func newBatonOtel() (*server.Server, *sdktrace.TracerProvider, *countingExporter, error) {
	exp := &countingExporter{}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(exp),
	)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	tel := &server.Telemetry{TracerProvider: tp, MeterProvider: mp}
	srv, err := newBaton(func(o *server.Options) { o.Telemetry = tel })
	return srv, tp, exp, err
}

// knownServer reports whether s is a server -servers accepts.
func knownServer(s string) bool {
	return slices.Contains(serverNames, s) || slices.Contains(variantNames, s)
}

// reportVariants prints what each variant costs beside plain Baton, for
// echo and confirm: the ratio of its ops/s to Baton's (and of their server
// CPU per operation), and the server CPU and allocations it adds.
func reportVariants(sum map[string]map[string]*summary) {
	var rows []string
	for _, v := range variantNames {
		for _, sc := range []string{"echo", "confirm"} {
			n, d := sum[sc][v], sum[sc]["baton"]
			if n == nil || d == nil {
				continue
			}
			note := ""
			if n.errors > 0 || d.errors > 0 {
				note = "INVALID (errors)"
			} else if n.bound() != "server" || d.bound() != "server" {
				note = fmt.Sprintf("bound by: %s %s, baton %s", v, n.bound(), d.bound())
			}
			rows = append(rows, fmt.Sprintf("| %s/baton (%s) | %.2f | %.2f | %+.1fµs | %+.0f | %+.1f | %s | %s | %s |", v, sc,
				n.ops/d.ops, d.srvCPU/n.srvCPU, n.srvCPU-d.srvCPU, n.allocs-d.allocs, (n.bytes-d.bytes)/1024,
				fmtDur(time.Duration(n.p99)), fmtDur(time.Duration(d.p99)), note))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Printf("\n## Authorization and telemetry: Baton variants against plain Baton\n\n")
	fmt.Println("baton-auth: a cached JWT verified by auth.ResourceServer on every request; baton-otel: Options.Telemetry with a recording (always-on) sampler and a batch span processor to a discarding exporter. " +
		"ops/s and CPU as in the ratios above; added = the variant's server CPU, allocations and KiB per operation minus Baton's.")
	fmt.Println()
	fmt.Println("| ratio | ops/s | CPU | added CPU/op | added allocs/op | added KiB/op | p99 | baton p99 | note |")
	fmt.Println("|---|---:|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
}
