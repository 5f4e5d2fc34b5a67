package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resumeCounting serves the example server, counting the streams resumed
// with GET and Last-Event-ID.
func resumeCounting(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	srv := exampleServer(t, testKey)
	resumes := new(atomic.Int32)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" {
			resumes.Add(1)
		}
		srv.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, resumes
}

// TestPollingGoSDK: test_reconnection ends its response stream before it
// answers (server.Call.CloseStream, SSE polling); the official Go SDK
// (v1.8.0), a 2025-11-25 client, resumes it with GET and Last-Event-ID
// and gets the result there, several calls at once.
func TestPollingGoSDK(t *testing.T) {
	ts, resumes := resumeCounting(t)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "polling", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: ts.URL}, &gosdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const n = 5
	errs := make(chan error, n)
	for range n {
		go func() {
			res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "test_reconnection"})
			switch {
			case err != nil:
				errs <- err
			case res.IsError || len(res.Content) != 1:
				errs <- io.ErrUnexpectedEOF
			default:
				tc, _ := res.Content[0].(*gosdk.TextContent)
				if tc == nil || tc.Text == "" {
					errs <- io.ErrUnexpectedEOF
					return
				}
				errs <- nil
			}
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("test_reconnection: %v", err)
		}
	}
	if got := resumes.Load(); got < n {
		t.Errorf("%d streams resumed with Last-Event-ID, want %d: the server did not end them", got, n)
	}
}
