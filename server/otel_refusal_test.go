package server_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/baton-mcp/baton/legacy"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mcptest"
	"github.com/baton-mcp/baton/server"
)

// TestRefusalIsSeen: a request refused by a quota (here the second
// 2025-11-25 session of a client whose limit is one) is explained in the
// JSON-RPC body (the limit and the seconds), logged, and counted as
// baton.refusals under the limit's name.
func TestRefusalIsSeen(t *testing.T) {
	rec := newOtelRecorder(t)
	var logs syncBuffer
	srv, err := server.New(mcp.Implementation{Name: "refusals", Version: "1"}, &server.Options{
		Telemetry: rec.tel,
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
		Legacy:    legacy.New(&legacy.Options{MaxSessionsPerClient: 1}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	connect := func() error {
		c, err := mcptest.New(mcptest.URL(ts.URL, nil), &mcptest.Options{Protocol: mcp.LegacyProtocolVersion})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Connect(testCtx(t))
		return err
	}
	if err := connect(); err != nil {
		t.Fatalf("the first session: %v", err)
	}
	err = connect()
	var e *mcptest.Error
	if !errors.As(err, &e) || e.Status != 429 {
		t.Fatalf("the second session: %v, want HTTP 429", err)
	}
	var data struct {
		Limit             string `json:"limit"`
		RetryAfterSeconds int    `json:"retryAfterSeconds"`
	}
	if err := json.Unmarshal(e.Data, &data); err != nil || data.Limit != "legacy.Options.MaxSessionsPerClient" || data.RetryAfterSeconds < 1 {
		t.Errorf("the refusal's data %s (%v), want the limit legacy.Options.MaxSessionsPerClient and the seconds", e.Data, err)
	}
	if got := logs.String(); !strings.Contains(got, `msg="request refused by a limit" limit=legacy.Options.MaxSessionsPerClient status=429`) {
		t.Errorf("no log line for the refusal:\n%s", got)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "refused") {
			t.Logf("logged: %s", line)
		}
	}
	t.Logf("answered: HTTP %d, code %d, %q, data %s", e.Status, e.Code, e.Message, e.Data)
	v, found := metricValue(t, rec, "baton.refusals", attribute.String("baton.limit", "legacy.Options.MaxSessionsPerClient"))
	if !found || v != 1 {
		t.Errorf("baton.refusals{baton.limit=legacy.Options.MaxSessionsPerClient} = %v (found %v), want 1", v, found)
	}
}
