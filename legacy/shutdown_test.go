package legacy_test

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// Server.Shutdown reaches the legacy handler: a new session is refused
// with 503 and Retry-After (a balancer tries another instance), and
// Shutdown returns once no call is in progress.
func TestShutdownRefusesNewSessions(t *testing.T) {
	srv := newServer(t)
	h := http.Handler(srv)
	if w := inProcess(t, h, "", "", "", initMsg()); w.Code != http.StatusOK {
		t.Fatalf("initialize before the shutdown: HTTP %d %s", w.Code, w.Body.Bytes())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with nothing in progress: %v", err)
	}
	w := inProcess(t, h, "", "", "", initMsg())
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "1" {
		t.Fatalf("initialize while shut down: HTTP %d, Retry-After %q; want 503, 1", w.Code, w.Header().Get("Retry-After"))
	}
	if e := rpcErrorOf(t, w); e.Code != -32603 {
		t.Errorf("initialize while shut down: error %d, want -32603", e.Code)
	}
}
