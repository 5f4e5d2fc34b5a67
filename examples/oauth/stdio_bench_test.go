package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/server"
)

func stdioCall(id, name, args string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.ProtocolVersion + `","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
}

// TestStdioFromEnvironment: a stdio server takes its access token from
// the environment, verified as a bearer token would be, and its scopes
// decide the calls.
func TestStdioFromEnvironment(t *testing.T) {
	f := start(t, nil)
	const env = "BATON_TEST_ACCESS_TOKEN"
	t.Setenv(env, "")
	if _, err := f.rs.FromEnvironment(context.Background(), env); err == nil {
		t.Fatal("no token accepted")
	}
	t.Setenv(env, f.sign(t, f.claims(func(c jwt.MapClaims) { c["aud"] = "https://other.example" })))
	if _, err := f.rs.FromEnvironment(context.Background(), env); err == nil || !strings.Contains(err.Error(), "not for this resource") {
		t.Fatalf("wrong audience: %v", err)
	}
	t.Setenv(env, f.token(t, "reader", ScopeRead))
	ctx, err := f.rs.FromEnvironment(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = f.srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	send := func(line string) string {
		if _, err := io.WriteString(inW, line); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatal("no answer")
		}
		return lines.Text()
	}
	if got := send(stdioCall("1", "whoami", "{}")); !strings.Contains(got, `\"subject\":\"reader\"`) {
		t.Fatalf("whoami: %s", got)
	}
	if got := send(stdioCall("2", "read_file", `{"path":"a"}`)); !strings.Contains(got, "contents of a") {
		t.Fatalf("read_file: %s", got)
	}
	if got := send(stdioCall("3", "write_file", `{"path":"a","content":"x"}`)); !strings.Contains(got, "insufficient scope (needs files:read files:write)") {
		t.Fatalf("write_file: %s", got)
	}
	inW.Close()
}

// BenchmarkAuthorization measures, in one run, a tools/call without
// authorization, with a JWT already verified (cache hit), and with an
// opaque token already introspected (cache hit), in process.
//
//	cd examples && go test -run NONE -bench Authorization -benchmem ./oauth
func BenchmarkAuthorization(b *testing.B) {
	f := start(b, nil)
	err := f.srv.AddTool(server.Tool{Name: "ping"}, func(ctx context.Context, req *server.ToolRequest) (*server.ToolResult, error) {
		return server.TextResult("pong"), nil
	})
	if err != nil {
		b.Fatal(err)
	}
	jwtToken, opaque := f.token(b, "jwt-client", ScopeRead), f.token(b, "opaque-client", ScopeRead)
	plain := http.Handler(f.srv)
	protected := handler(f.rs, f.srv)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"` +
		mcp.ProtocolVersion + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	run := func(b *testing.B, h http.Handler, token string) {
		do := func() int {
			req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+Path, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", mcp.ProtocolVersion)
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "ping")
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code
		}
		if c := do(); c != 200 { // warms the cache
			b.Fatalf("status %d", c)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if c := do(); c != 200 {
				b.Fatalf("status %d", c)
			}
		}
	}
	b.Run("plain", func(b *testing.B) { run(b, plain, "") })
	b.Run("jwt-cached", func(b *testing.B) { run(b, protected, jwtToken) })
	b.Run("introspection-cached", func(b *testing.B) { run(b, protected, opaque) })
	// The three interleaved, call by call, and the median of each: on a
	// busy machine the separate runs above drift with the load; these
	// ratios do not.
	b.Run("interleaved", func(b *testing.B) {
		variants := []struct {
			h     http.Handler
			token string
		}{{plain, ""}, {protected, jwtToken}, {protected, opaque}}
		times := make([][]time.Duration, len(variants))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			for v, vr := range variants {
				req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1"+Path, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("MCP-Protocol-Version", mcp.ProtocolVersion)
				req.Header.Set("Mcp-Method", "tools/call")
				req.Header.Set("Mcp-Name", "ping")
				if vr.token != "" {
					req.Header.Set("Authorization", "Bearer "+vr.token)
				}
				rec := httptest.NewRecorder()
				start := time.Now()
				vr.h.ServeHTTP(rec, req)
				times[v] = append(times[v], time.Since(start))
				if rec.Code != 200 {
					b.Fatalf("status %d", rec.Code)
				}
			}
		}
		med := func(d []time.Duration) float64 {
			slices.Sort(d)
			return float64(d[len(d)/2])
		}
		p, j, in := med(times[0]), med(times[1]), med(times[2])
		b.ReportMetric(p, "plain-ns")
		b.ReportMetric(j, "jwt-ns")
		b.ReportMetric(in, "introspection-ns")
		b.ReportMetric(j/p, "jwt/plain")
		b.ReportMetric(in/p, "introspection/plain")
	})
}
