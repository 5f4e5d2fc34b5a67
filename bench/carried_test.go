package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// carriedCounts are the numbers of carried answers BenchmarkCarried
// measures.
var carriedCounts = []int{1, 2, 4, 8, 16}

// BenchmarkCarried serves one request of the rounds scenario's ask tool
// per iteration, in-process: a retry whose state carries k answers the
// earlier rounds recorded (q1 … qk) and which answers the question the
// state issued (q(k+1)). The handler replays the k recorded answers, takes
// the new one, and either completes ("complete": the tool asks k+1
// questions) or asks one more and seals a state carrying k+1 answers
// ("suspend": it asks k+2). The request is the same every iteration (the
// ask tool uses no ledger), so the figures are one request's cost as a
// function of the answers its state carries: what the issue bounds at
// +10% from 1 to 16.
func BenchmarkCarried(b *testing.B) {
	h, err := newBaton() // only Baton: no peer's background work in the counts
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCarried(b, h)
}

// BenchmarkCarriedFloor is BenchmarkCarried on the carried floor
// (carried_floor.go): what carrying sealed answers costs a bare handler.
func BenchmarkCarriedFloor(b *testing.B) {
	f, err := newCarriedFloor()
	if err != nil {
		b.Fatal(err)
	}
	benchmarkCarried(b, f)
}

func benchmarkCarried(b *testing.B, h http.Handler) {
	for _, mode := range []string{"complete", "suspend"} {
		for _, k := range carriedCounts {
			n := k + 1
			if mode == "suspend" {
				n = k + 2
			}
			body, err := carriedRequest(h, n, k)
			if err != nil {
				b.Fatal(err)
			}
			want := []byte(`"text":"done ` + strconv.Itoa(n) + `"`)
			if mode == "suspend" {
				want = []byte(`"q` + strconv.Itoa(k+2) + `":{"method":"elicitation/create"`)
			}
			b.Run(mode+"/carried="+strconv.Itoa(k), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if out := serveOnce(h, askTool, body); !bytes.Contains(out, want) {
						b.Fatalf("%.300s", out)
					}
				}
			})
		}
	}
}

// carriedRequest runs the ask tool with n questions through its first k+1
// rounds and returns the request of round k+2: the state issued by round
// k+1 (carrying the answers q1 … qk) and the answer to q(k+1).
func carriedRequest(h http.Handler, n, k int) ([]byte, error) {
	args := `"arguments":{"n":` + strconv.Itoa(n) + `},`
	params := args
	var body []byte
	for r := 1; r <= k+2; r++ {
		body = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",` + params + metaJSON + `}}`)
		if r == k+2 {
			return body, nil
		}
		out := serveOnce(h, askTool, body)
		state := stateIn(out)
		if state == nil {
			return nil, fmt.Errorf("round %d of %d: %.300s", r, n, out)
		}
		key := "q" + strconv.Itoa(r)
		params = args + `"inputResponses":{"` + key + `":{"action":"accept","content":{"ok":true}}},"requestState":"` + string(state) + `",`
	}
	return body, nil
}

// TestCarriedRequests checks that the requests BenchmarkCarried replays
// are what it says: each completes (or asks the next question) and can be
// served again with the same outcome.
func TestCarriedRequests(t *testing.T) {
	h, err := newBaton()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range carriedCounts {
		body, err := carriedRequest(h, k+1, k)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if out := serveOnce(h, askTool, body); !bytes.Contains(out, []byte(`"text":"done `+strconv.Itoa(k+1)+`"`)) {
				t.Fatalf("carried=%d: %.300s", k, out)
			}
		}
		// A wrong carried answer cannot be slipped in: the answers are
		// inside the sealed state, and the state's answer for a question it
		// did not issue is ignored (the question is asked again).
		tampered := bytes.Replace(body, []byte(`"content":{"ok":true}`), []byte(`"content":{"ok":"yes"}`), 1)
		if out := serveOnce(h, askTool, tampered); !bytes.Contains(out, []byte(`-32602`)) {
			t.Fatalf("carried=%d: a wrong answer to the issued question was not refused: %.300s", k, out)
		}
	}
}

// TestCarriedOverHTTP runs the carried scenario's operation (carried.go)
// against Baton over HTTP, as the load generator does: each retry is
// served the same way again (completing, or asking the next question with
// a state one answer larger), and a full decode is checked too.
func TestCarriedOverHTTP(t *testing.T) {
	urls, _, err := startServers()
	if err != nil {
		t.Fatal(err)
	}
	for _, suspend := range []bool{false, true} {
		for _, k := range []int{1, 3} {
			sc := carriedScenario(k, suspend)
			if gk, gs, ok := carriedOf(sc); !ok || gk != k || gs != suspend {
				t.Fatalf("carriedOf(%q) = %d, %v, %v", sc, gk, gs, ok)
			}
			for _, server := range []string{"baton", "floor"} {
				c, err := newRawClient(urls[server], 2)
				if err != nil {
					t.Fatal(err)
				}
				op := c.carriedOp(k, suspend)
				for i := range 3 {
					if err := op(); err != nil {
						t.Fatalf("%s on %s, operation %d: %v", sc, server, i, err)
					}
				}
				if c.id != k+1+3 {
					t.Errorf("%s on %s: %d requests, want %d (k+1 rounds to build the retry, then one per operation)", sc, server, c.id, k+4)
				}
				c.close()
			}
		}
	}
	if _, err := carriedCountsOf("1,0"); err == nil {
		t.Error("-carried 1,0 accepted")
	}
}

// TestCarriedFloorRefuses checks that the carried floor (carried_floor.go)
// does the work it is the floor of: a state it did not seal, or a refused
// answer to the issued question, is turned away, so its cost per carried
// answer includes opening the sealed answers.
func TestCarriedFloorRefuses(t *testing.T) {
	f, err := newCarriedFloor()
	if err != nil {
		t.Fatal(err)
	}
	serve := func(params string) (int, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask",` + params + metaJSON + `}}`
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Mcp-Name", askTool)
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	args := `"arguments":{"n":3},`
	code, out := serve(args)
	state := stateIn([]byte(out))
	if code != http.StatusOK || state == nil || !strings.Contains(out, `"q1":{"method":"elicitation/create"`) {
		t.Fatalf("round 1: %d %.300s", code, out)
	}
	answer := func(ok string, st []byte) string {
		return args + `"inputResponses":{"q1":{"action":"accept","content":{"ok":` + ok + `}}},"requestState":"` + string(st) + `",`
	}
	if code, out := serve(answer("true", state)); code != http.StatusOK || !strings.Contains(out, `"q2":{"method":"elicitation/create"`) {
		t.Fatalf("round 2: %d %.300s", code, out)
	}
	forged := bytes.Clone(state)
	forged[len(forged)/2] ^= 1
	if code, _ := serve(answer("true", forged)); code != http.StatusBadRequest {
		t.Errorf("a forged state: %d, want 400", code)
	}
	if code, _ := serve(answer("false", state)); code != http.StatusBadRequest {
		t.Errorf("a refused answer: %d, want 400", code)
	}
}
