package server

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// Serve, once its context ends, closes the listener at once but closes an
// idle keep-alive connection only after its client has used it: a request
// written on it after the stop began (as a proxy reusing a pooled
// connection does) is served, with Connection: close, and not cut. Then
// Serve returns.
func TestServeWaitsForIdleConnections(t *testing.T) {
	s := newTestServer(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- s.Serve(ctx, &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}, ln, waitLimit)
	}()

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	roundTrip := func(what string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/mcp", nil)
		if err := req.Write(conn); err != nil {
			t.Fatalf("%s: write: %v", what, err)
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("%s: no response: %v", what, err)
		}
		resp.Body.Close()
		return resp
	}
	if r := roundTrip("before the stop"); r.StatusCode != http.StatusMethodNotAllowed || r.Close {
		t.Fatalf("before the stop: HTTP %d, Connection: close %v; want 405 on a kept connection", r.StatusCode, r.Close)
	}
	cancel()
	// The listener closes: new connections are refused (a proxy retries
	// them elsewhere).
	deadline := time.Now().Add(waitLimit)
	for {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts after the stop began")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) while an idle connection was open", err)
	default:
	}
	if r := roundTrip("on the idle connection after the stop began"); r.StatusCode != http.StatusMethodNotAllowed || !r.Close {
		t.Errorf("on the idle connection after the stop began: HTTP %d, Connection: close %v; want 405 with Connection: close", r.StatusCode, r.Close)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Serve did not return once the connection closed")
	}
}
