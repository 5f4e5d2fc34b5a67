package main

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// checkLegacyServer checks that a 2025-11-25 server really does the work
// of both scenarios, with the load generator's own client: the echo
// answer is the text sent (for the peers; the floor's is fixed, but its
// id must be the request's), the question arrives on the call's stream
// and the result only carries the answer that was POSTed (an accept and a
// decline give different results), two calls parked at once in one
// session each get their own answer (answered in the reverse order), an
// answer to a request no call waits for is refused, and a request with
// another session id is refused. It returns the first failure.
func checkLegacyServer(url string, fixedEcho bool, notes *[]string) error {
	c, err := newLegacyClient(url, 1)
	if err != nil {
		return err
	}
	defer c.close()
	if err := c.initialize(); err != nil {
		return err
	}
	// The load generator's own operations.
	if err := c.sessionCallOp(); err != nil {
		return fmt.Errorf("session-call: %w", err)
	}
	if err := c.sessionElicitOp(); err != nil {
		return fmt.Errorf("session-elicit: %w", err)
	}
	// The answer is the one sent.
	text := "bench-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if fixedEcho {
		text = "hello"
	}
	if err := c.callEcho(text, text); err != nil {
		return fmt.Errorf("echo %q: %w", text, err)
	}
	// The answer reaches the handler: a decline gives the declined result.
	eid, callID, err := c.startConfirm()
	if err != nil {
		return err
	}
	if err := c.answerConfirm(eid, false); err != nil {
		return err
	}
	if err := c.endConfirm(callID, declinedText); err != nil {
		return fmt.Errorf("declined: %w", err)
	}
	// Two calls parked at once in one session, answered in the reverse
	// order, each with its own answer.
	d, err := newLegacyClient(url, 1)
	if err != nil {
		return err
	}
	defer d.close()
	d.sid, d.id = c.sid, 1000
	eid1, call1, err := c.startConfirm()
	if err != nil {
		return fmt.Errorf("first parked call: %w", err)
	}
	eid2, call2, err := d.startConfirm()
	if err != nil {
		return fmt.Errorf("second parked call: %w", err)
	}
	if bytes.Equal(eid1, eid2) {
		return fmt.Errorf("two pending elicitations share the id %s", eid1)
	}
	if err := d.answerConfirm(eid2, false); err != nil {
		return fmt.Errorf("answer to the second call: %w", err)
	}
	if err := d.endConfirm(call2, declinedText); err != nil {
		return fmt.Errorf("second call: %w", err)
	}
	if err := c.answerConfirm(eid1, true); err != nil {
		return fmt.Errorf("answer to the first call: %w", err)
	}
	if err := c.endConfirm(call1, confirmText); err != nil {
		return fmt.Errorf("first call: %w", err)
	}
	// An answer to a request that no call waits for (already answered):
	// Baton, mcp-go and the floor refuse it (400); the go-sdk acknowledges
	// it (202) and drops it. Not part of the scenarios' work: noted only.
	if err := c.answerConfirm(eid1, true); err == nil {
		*notes = append(*notes, "an answer to a request already answered is acknowledged (202) and dropped")
	} else {
		*notes = append(*notes, "an answer to a request already answered is refused: "+err.Error())
	}
	// Another session id is refused.
	w, err := newLegacyClient(url, 1)
	if err != nil {
		return err
	}
	defer w.close()
	w.sid, w.wrongSession = c.sid, wrongSessionLike(c.sid)
	if err := w.callEcho("hello", "hello"); err == nil {
		return fmt.Errorf("a call with a session id the server never issued (%s) was answered", w.wrongSession)
	} else if w.main.status < 400 || w.main.status >= 500 {
		return fmt.Errorf("a call with a session id the server never issued: want a 4xx refusal, got %v", err)
	}
	return nil
}

// wrongSessionLike is a session id of the same form as sid (so a server
// that checks only the form accepts it) that the server never issued.
func wrongSessionLike(sid string) string {
	b := []byte(sid)
	for i := len(b) - 2; i >= 0; i-- { // keep the last character (a uuid's check digits, etc.)
		switch {
		case b[i] >= '0' && b[i] <= '8', b[i] >= 'a' && b[i] <= 'e', b[i] >= 'A' && b[i] <= 'Y':
			b[i]++
			return string(b)
		}
	}
	return "x" + sid
}

// TestLegacyServers checks every 2025-11-25 server (Baton's legacy
// endpoint, the go-sdk's and mcp-go's stateful servers, the floor) with
// checkLegacyServer.
func TestLegacyServers(t *testing.T) {
	urls := map[string]string{}
	if err := startLegacyServers(urls); err != nil {
		t.Fatal(err)
	}
	for _, name := range legacyServerNames {
		t.Run(name, func(t *testing.T) {
			var notes []string
			if err := checkLegacyServer(urls[legacyKey(name)], name == "floor", &notes); err != nil {
				t.Fatal(err)
			}
			for _, n := range notes {
				t.Log(n)
			}
		})
	}
}

// TestLegacyChecksBite checks that checkLegacyServer refuses a server that
// skips work: the floor answering confirm without waiting for the answer,
// accepting any session id, or giving every elicitation the same id (so
// answers reach the wrong call); and a server that does not echo.
func TestLegacyChecksBite(t *testing.T) {
	for _, skip := range []string{"result-first", "any-session", "fixed-id"} {
		t.Run(skip, func(t *testing.T) {
			f := newLegacyFloor()
			f.skip = skip
			u, err := listen(f)
			if err != nil {
				t.Fatal(err)
			}
			err = checkLegacyServer(u, true, new([]string))
			if err == nil {
				t.Fatalf("a floor that skips work (%s) passed the checks", skip)
			}
			t.Logf("refused: %v", err)
		})
	}
	t.Run("fixed-echo", func(t *testing.T) {
		u, err := listen(newLegacyFloor())
		if err != nil {
			t.Fatal(err)
		}
		err = checkLegacyServer(u, false, new([]string)) // checked as a peer: must echo what it is sent
		if err == nil || !strings.Contains(err.Error(), "echo") {
			t.Fatalf("a server answering a fixed text passed the echo check: %v", err)
		}
	})
	t.Run("session-ignored", func(t *testing.T) {
		// A peer wrapped so that any session id reaches it as the first
		// one it issued: the wrong-session check must see the call answered.
		var (
			mu    sync.Mutex
			first string
		)
		h, err := newLegacyHandlers()
		if err != nil {
			t.Fatal(err)
		}
		inner := h[legacyKey("baton")]
		u, err := listen(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			f := first
			mu.Unlock()
			if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && f != "" && sid != f {
				r.Header.Set("Mcp-Session-Id", f)
			}
			rec := &sidRecorder{ResponseWriter: w}
			inner.ServeHTTP(rec, r)
			mu.Lock()
			if first == "" && rec.sid != "" {
				first = rec.sid
			}
			mu.Unlock()
		}))
		if err != nil {
			t.Fatal(err)
		}
		err = checkLegacyServer(u, false, new([]string))
		if err == nil || !strings.Contains(err.Error(), "session id") {
			t.Fatalf("a server ignoring the session id passed the checks: %v", err)
		}
	})
}

// sidRecorder notes the session id a response issues.
type sidRecorder struct {
	http.ResponseWriter
	sid string
}

func (r *sidRecorder) WriteHeader(code int) {
	r.sid = r.Header().Get("Mcp-Session-Id")
	r.ResponseWriter.WriteHeader(code)
}

func (r *sidRecorder) Flush() { r.ResponseWriter.(http.Flusher).Flush() }

func (r *sidRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
