package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcptest"
)

// freeAddr returns a loopback address nothing listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// promQuery asks Prometheus's HTTP API for the value of an instant
// vector query with one sample, or reports false.
func promQuery(ctx context.Context, promURL, q string) (float64, bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, promURL+"/api/v1/query?query="+url.QueryEscape(q), nil)
	if err != nil {
		return 0, false, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, nil // not up yet
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Status != "success" || len(out.Data.Result) != 1 {
		return 0, false, nil
	}
	s, _ := out.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil, nil
}

// TestPrometheusScrapesFlowCounters runs a real two-round flow against the
// example over loopback, then starts a real Prometheus server that scrapes
// the example's /metrics and answers PromQL queries on the flow and round
// counters.
func TestPrometheusScrapesFlowCounters(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skipf("no prometheus binary on PATH (Debian: apt-get install prometheus): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	h, shutdown, err := newApp(prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer shutdown(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	app := "http://" + ln.Addr().String()

	c, err := mcptest.New(mcptest.URL(app+"/mcp", nil), &mcptest.Options{
		Elicitation: func(context.Context, *elicit.Request) (*elicit.Result, error) {
			return mcptest.Accept(map[string]any{"ok": true})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		res, err := c.CallTool(ctx, "confirm", map[string]any{})
		if err != nil || res.IsError || len(res.Exchange.Rounds) != 2 {
			t.Fatalf("confirm: %v %+v", err, res)
		}
	}
	// One more flow that asks and never comes back.
	if r, err := c.Do(ctx, "tools/call", map[string]any{"name": "confirm", "arguments": map[string]any{}}); err != nil || r.ResultType() != "input_required" {
		t.Fatalf("first round: %v %v", err, r)
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: baton
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, ln.Addr().String())), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--storage.tsdb.retention.time=1h")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	}()
	promURL := "http://" + promAddr

	want := map[string]float64{
		"baton_flow_issued_total":               3,
		"baton_flow_completed_total":            2,
		"sum(baton_flow_rounds_sum)":            4, // two flows of two rounds
		"sum(baton_flow_rounds_count)":          2,
		`sum(baton_flow_rounds_bucket{le="2"})`: 2,
		`sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"})`: 5,
		"sum(baton_flow_issued_total) - sum(baton_flow_completed_total)":                 1, // asked and never came back
	}
	for q, v := range want {
		deadline := time.Now().Add(90 * time.Second)
		for {
			got, ok, err := promQuery(ctx, promURL, q)
			if err != nil {
				t.Fatal(err)
			}
			if ok && got == v {
				t.Logf("PromQL %s = %v", q, got)
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("PromQL %s = %v (ok %v), want %v", q, got, ok, v)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	// The exposition itself, for the names.
	resp, err := http.Get(app + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "# TYPE "); ok && (strings.HasPrefix(n, "baton_") || strings.HasPrefix(n, "mcp_")) {
			names = append(names, n)
		}
	}
	t.Logf("exported:\n%s", strings.Join(names, "\n"))
}
