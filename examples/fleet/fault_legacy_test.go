//go:build linux

package fleet_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// legacySession is a 2025-11-25 client session spoken over raw HTTP, so
// that a test can also do what no SDK does (forge answers).
type legacySession struct {
	url, sid string
}

// legacyPost POSTs body to url in session sid and returns the response.
func legacyPost(ctx context.Context, url, sid string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return http.DefaultClient.Do(req)
}

// openLegacy initializes a session with elicitation through url.
func openLegacy(ctx context.Context, url string) (*legacySession, error) {
	resp, err := legacyPost(ctx, url, "", []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"fault-test","version":"1"}}}`))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		return nil, fmt.Errorf("initialize: HTTP %d, session %q", resp.StatusCode, sid)
	}
	s := &legacySession{url: url, sid: sid}
	r, err := legacyPost(ctx, url, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		return nil, err
	}
	r.Body.Close()
	return s, nil
}

// wireMsg is a JSON-RPC message read from an SSE stream.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// sseReader reads the messages of one SSE response.
type sseReader struct {
	resp *http.Response
	br   *bufio.Reader
	// LastID is the id of the last event read, if the server gave one.
	LastID string
}

func newSSEReader(resp *http.Response) *sseReader {
	return &sseReader{resp: resp, br: bufio.NewReaderSize(resp.Body, 64<<10)}
}

// next returns the next message, or an error at the end of the stream.
func (r *sseReader) next() (*wireMsg, error) {
	var data []byte
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if len(data) == 0 {
				continue
			}
			var m wireMsg
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("event %q: %w", data, err)
			}
			return &m, nil
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " ")...)
		case strings.HasPrefix(line, "id:"):
			r.LastID = strings.TrimSpace(strings.TrimPrefix(line, "id:"))
		}
	}
}

// elicitRound is one test_elicitation call of a session: the call is
// POSTed through url, its elicitation read from the call's stream, the
// answer POSTed through answerURL. It returns how long the answer took
// from its POST to the call's result, whether the answer was
// acknowledged (202), and an error if the round failed.
func (s *legacySession) elicitRound(ctx context.Context, n int, answerURL string) (time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"round %d"}}}`, n, n)
	resp, err := legacyPost(ctx, s.url, s.sid, []byte(call))
	if err != nil {
		return 0, false, fmt.Errorf("call: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("call: HTTP %d", resp.StatusCode)
	}
	rd := newSSEReader(resp)
	req, err := rd.next()
	if err != nil || req.Method != "elicitation/create" {
		return 0, false, fmt.Errorf("want elicitation/create, got %+v, %v", req, err)
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"username": fmt.Sprint("u", n), "email": "u@example.com"}}})
	began := time.Now()
	ar, err := legacyPost(ctx, answerURL, s.sid, answer)
	if err != nil {
		return 0, false, fmt.Errorf("answer: %w", err)
	}
	_, _ = io.Copy(io.Discard, ar.Body)
	ar.Body.Close()
	if ar.StatusCode != http.StatusAccepted {
		return 0, false, fmt.Errorf("answer: HTTP %d", ar.StatusCode)
	}
	for {
		m, err := rd.next()
		if err != nil {
			return 0, true, fmt.Errorf("acknowledged answer, but no result: %w", err)
		}
		if m.Method == "" && len(m.ID) > 0 {
			if m.Error != nil || !bytes.Contains(m.Result, []byte(fmt.Sprint("u", n))) {
				return 0, true, fmt.Errorf("acknowledged answer, result %s %+v", m.Result, m.Error)
			}
			return time.Since(began), true, nil
		}
	}
}

// elicitID returns the instance part of a server request id
// ("<instance>.<n>").
func elicitInstance(id json.RawMessage) string {
	var s string
	_ = json.Unmarshal(id, &s)
	inst, _, _ := strings.Cut(s, ".")
	return inst
}

func p99(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	d = slices.Clone(d)
	slices.Sort(d)
	return d[(len(d)*99+99)/100-1]
}

// victims runs rounds of elicitRound on each session at once and returns
// the latencies, the acknowledged answers and the errors.
func victims(ctx context.Context, sessions []*legacySession, rounds int, front string) (lat []time.Duration, acked int, errs []error) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, s := range sessions {
		wg.Go(func() {
			for r := range rounds {
				d, ok, err := s.elicitRound(ctx, 1000*i+r+1, front)
				mu.Lock()
				if ok {
					acked++
				}
				if err != nil {
					errs = append(errs, fmt.Errorf("session %d round %d: %w", i, r, err))
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat, acked, errs
}

// testForgedAnswerFlood: one session POSTs forged answers of 0.5–4 MiB
// naming another instance, 4 at a time, straight to the instances, while
// other sessions answer real elicitations through nginx. None of their
// acknowledged answers is lost and their p99 stays within 10× of the
// quiet figure, measured first in the same test.
func testForgedAnswerFlood(t *testing.T, ctx context.Context, fl *fleet) {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	const nVictims, quietRounds, floodRounds = 6, 5, 12
	var sessions []*legacySession
	for range nVictims {
		s, err := openLegacy(ctx, fl.front)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	quiet, quietAcked, errs := victims(ctx, sessions, quietRounds, fl.front)
	for _, err := range errs {
		t.Error(err)
	}
	// The instance names, from the ids of real requests.
	var targets []string
	for _, in := range fl.inst {
		s, err := openLegacy(ctx, "http://"+in.addr+"/mcp")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := legacyPost(ctx, s.url, s.sid, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_elicitation","arguments":{"message":"name?"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		m, err := newSSEReader(resp).next()
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, elicitInstance(m.ID))
	}
	attacker, err := openLegacy(ctx, fl.front)
	if err != nil {
		t.Fatal(err)
	}
	floodCtx, stopFlood := context.WithCancel(ctx)
	var sent, refused413, refused400, refused429, other atomic.Int64
	var fwg sync.WaitGroup
	for w := range 4 {
		fwg.Go(func() {
			pad := strings.Repeat("A", 4<<20)
			for n := 0; floodCtx.Err() == nil; n++ {
				// Three workers send answers within the size limit (they
				// reach the check of the id), one sends larger ones.
				size := 512<<10 + rand.IntN(500<<10)
				if w == 0 {
					size = 1<<20 + rand.IntN(3<<20)
				}
				target := targets[(w+n)%len(targets)]
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s.%d","result":{"action":"accept","content":{"x":"%s"}}}`, target, 999999000+n, pad[:size])
				addr := fl.inst[(w+n+1)%len(fl.inst)].addr // never the named instance
				resp, err := legacyPost(floodCtx, "http://"+addr+"/mcp", attacker.sid, []byte(body))
				if err != nil {
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				sent.Add(1)
				switch resp.StatusCode {
				case http.StatusRequestEntityTooLarge:
					refused413.Add(1)
				case http.StatusBadRequest:
					refused400.Add(1)
				case http.StatusTooManyRequests:
					refused429.Add(1)
				default:
					other.Add(1)
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // the flood is on
	flooded, floodAcked, errs := victims(ctx, sessions, floodRounds, fl.front)
	stopFlood()
	fwg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	lost := (quietAcked - len(quiet)) + (floodAcked - len(flooded))
	qp, fp := p99(quiet), p99(flooded)
	t.Logf("forged-answer flood: %d forged answers of 0.5–4 MiB from one session (413 too large %d, 400 not waiting %d, 429 rate %d, other %d); %d other sessions: quiet %d answers acknowledged, p99 %v; under flood %d acknowledged, p99 %v; %d acknowledged answers lost",
		sent.Load(), refused413.Load(), refused400.Load(), refused429.Load(), other.Load(), nVictims, quietAcked, qp.Round(100*time.Microsecond), floodAcked, fp.Round(100*time.Microsecond), lost)
	if lost != 0 {
		t.Errorf("%d acknowledged answers lost", lost)
	}
	if other.Load() != 0 {
		t.Errorf("%d forged answers were not refused", other.Load())
	}
	// 10× the quiet figure, with a floor of 10× 50 ms: on a loaded
	// 2-core machine (the flood's client shares it) a quiet p99 of a few
	// milliseconds is noise. Under the race detector every instance is
	// several times slower and the flood's CPU cost dominates: the figures
	// are logged, the bound is held in the ordinary build.
	if limit := 10 * max(qp, 50*time.Millisecond); fp > limit && !raceBuild {
		t.Errorf("p99 under flood %v > %v (10× the quiet %v)", fp, limit, qp)
	}
}

// TestFaultsLegacy runs the fault rows of 2025-11-25 sessions on one
// fleet (three instances behind nginx, Redis with an append-only file):
// the forged-answer flood, resumed streams (raw and with the official
// TypeScript SDK), and Redis killed for 1 s and 5 s while calls wait.
func TestFaultsLegacy(t *testing.T) {
	nginxBin := requireNginx(t)
	fl := newFleetAOF(t, nginxBin)
	// The rows' bound starts once the fleet is up (building it with the
	// race detector takes a while on a loaded machine).
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Run("forged answer flood", func(t *testing.T) { testForgedAnswerFlood(t, ctx, fl) })
	t.Run("resume", func(t *testing.T) { testResume(t, ctx, fl) })
	t.Run("resume with the TypeScript SDK", func(t *testing.T) { testResumeTS(t, ctx, fl) })
	for _, d := range []time.Duration{time.Second, 5 * time.Second} {
		t.Run(fmt.Sprintf("Redis killed for %v", d), func(t *testing.T) { testRedisOutage(t, ctx, fl, d) })
	}
}
