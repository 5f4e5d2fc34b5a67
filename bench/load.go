package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"net/http"
	neturl "net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// ---------------------------------------------------------------- histogram

// hist is a log-linear latency histogram in nanoseconds (HDR-like): 128
// linear sub-buckets per power of two, so a recorded value is off by at
// most 1/128 (0.8%). Memory is fixed (about 34 KiB), whatever the count.
const (
	subBits  = 7
	subCount = 1 << subBits
	maxShift = 40
)

type hist struct {
	counts [subCount + maxShift*subCount]uint64
	n      uint64
}

func bucketOf(v uint64) int {
	if v < subCount {
		return int(v)
	}
	shift := bits.Len64(v) - (subBits + 1)
	if shift >= maxShift {
		return len(hist{}.counts) - 1
	}
	return subCount + shift*subCount + int(v>>shift) - subCount
}

func valueOf(i int) uint64 {
	if i < subCount {
		return uint64(i)
	}
	shift := (i - subCount) / subCount
	m := uint64((i-subCount)%subCount + subCount)
	return m<<shift + (uint64(1)<<shift)/2 // middle of the bucket
}

func (h *hist) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
	h.n++
}

func (h *hist) merge(o *hist) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
}

func (h *hist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	target := uint64(q*float64(h.n) + 0.5)
	if target < 1 {
		target = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= target {
			return time.Duration(valueOf(i))
		}
	}
	return 0
}

// ---------------------------------------------------------------- requests

const protocolVersion = "2026-07-28"

// client is one worker's connection to one server: a shared keep-alive
// transport, its own headers and buffers.
type client struct {
	http   *http.Client
	url    string
	id     int
	header map[string]http.Header // per tool
	buf    bytes.Buffer
}

func newTransport(concurrency int) *http.Transport {
	return &http.Transport{
		MaxIdleConns:        concurrency * 2,
		MaxIdleConnsPerHost: concurrency * 2,
		MaxConnsPerHost:     concurrency,
		IdleConnTimeout:     5 * time.Minute,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false, // plain HTTP/1.1 keep-alive
	}
}

func newClient(tr *http.Transport, url string) *client {
	c := &client{http: &http.Client{Transport: tr, Timeout: 30 * time.Second}, url: url, header: map[string]http.Header{}}
	for _, tool := range []string{"echo", "confirm"} {
		c.header[tool] = http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {protocolVersion},
			"Mcp-Method":           {"tools/call"},
			"Mcp-Name":             {tool},
		}
		if u, err := neturl.Parse(url); err == nil && bearerOf(u) != "" { // baton-auth (variants.go)
			c.header[tool].Set("Authorization", "Bearer "+bearerOf(u))
		}
	}
	return c
}

// The _meta envelope every request carries.
const metaJSON = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"baton-bench","version":"1.0.0"}}`

func (c *client) body(tool, rest string) []byte {
	c.id++
	return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(c.id) + `,"method":"tools/call","params":{"name":"` + tool + `",` + rest + metaJSON + `}}`)
}

// response is what the load generator checks in every answer.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *struct {
		ResultType string `json:"resultType"`
		Content    []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError       bool `json:"isError"`
		InputRequests map[string]struct {
			Method string `json:"method"`
			Params struct {
				Mode            string `json:"mode"`
				RequestedSchema struct {
					Properties map[string]struct {
						Type string `json:"type"`
					} `json:"properties"`
					Required []string `json:"required"`
				} `json:"requestedSchema"`
			} `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	} `json:"result"`
}

func (c *client) post(tool string, body []byte) (*response, error) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = c.header[tool]
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	c.buf.Reset()
	_, err = c.buf.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: status %d: %.300s", tool, res.StatusCode, c.buf.Bytes())
	}
	var r response
	if err := json.Unmarshal(c.buf.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("%s: %v: %.300s", tool, err, c.buf.Bytes())
	}
	if want := strconv.Itoa(c.id); string(r.ID) != want {
		return nil, fmt.Errorf("%s: id %s, want %s", tool, r.ID, want)
	}
	if r.Error != nil || r.Result == nil {
		return nil, fmt.Errorf("%s: not a result: %.300s", tool, c.buf.Bytes())
	}
	return &r, nil
}

func wantText(r *response, text string) error {
	res := r.Result
	if res.ResultType != "complete" || res.IsError || len(res.Content) != 1 || res.Content[0].Type != "text" || res.Content[0].Text != text {
		b, _ := json.Marshal(res)
		return fmt.Errorf("want complete text %q, got %.300s", text, b)
	}
	return nil
}

// echoOp is scenario (a): one plain tools/call.
func (c *client) echoOp() error {
	r, err := c.post("echo", c.body("echo", `"arguments":{"text":"hello"},`))
	if err != nil {
		return err
	}
	return wantText(r, echoText)
}

// confirmOp is scenario (b): round 1 (input_required with one form
// elicitation and a requestState), then round 2 with the answer and the
// echoed state (complete). One operation.
func (c *client) confirmOp() error {
	r, err := c.post("confirm", c.body("confirm", `"arguments":{"id":42},`))
	if err != nil {
		return fmt.Errorf("round 1: %w", err)
	}
	if err := checkRound1(r); err != nil {
		return err
	}
	res := r.Result
	state, err := json.Marshal(res.RequestState)
	if err != nil {
		return err
	}
	lastStateLen.Store(int64(len(res.RequestState)))
	r, err = c.post("confirm", c.body("confirm", `"arguments":{"id":42},`+
		`"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},`+
		`"requestState":`+string(state)+`,`))
	if err != nil {
		return fmt.Errorf("round 2: %w", err)
	}
	if err := wantText(r, confirmText); err != nil {
		return fmt.Errorf("round 2: %w", err)
	}
	return nil
}

// checkRound1 checks a decoded round-1 answer of confirm: input_required
// with one form elicitation (confirm, boolean) and a state.
func checkRound1(r *response) error {
	res := r.Result
	q, ok := res.InputRequests["confirm"]
	if res.ResultType != "input_required" || res.RequestState == "" || len(res.InputRequests) != 1 || !ok ||
		q.Method != "elicitation/create" || q.Params.RequestedSchema.Properties["confirm"].Type != "boolean" {
		b, _ := json.Marshal(res)
		return fmt.Errorf("round 1: want input_required with a confirm form and a state, got %.300s", b)
	}
	return nil
}

// lastStateLen is the length of the last requestState seen (reported);
// firstStateLen, in the rounds scenario, that of the first round's.
var lastStateLen, firstStateLen atomic.Int64

// ---------------------------------------------------------------- runs

// result is one measurement of one server in one scenario.
type result struct {
	Server, Scenario string
	Ops              uint64
	Errors           uint64
	FirstErrors      []string
	Elapsed          time.Duration
	Hist             *hist
	StateLen         int64
	FirstStateLen    int64
	// Allocations (objects, bytes) of the server process in the window.
	ServerAllocs, ServerAllocBytes uint64
	// Others is the share (%) of the window the server's pinned CPU spent
	// on anything but the server process (-1: not pinned).
	Others float64
	// CPU time (user+system) the server process and the load generator
	// spent in the recorded window.
	ServerCPU, ClientCPU time.Duration
}

func (r *result) OpsPerSec() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

// busy is d as a share of the window's wall time, in percent.
func (r *result) busy(d time.Duration) float64 { return 100 * float64(d) / float64(r.Elapsed) }

// perOp is v per recorded operation.
func (r *result) perOp(v float64) float64 {
	if r.Ops == 0 {
		return 0
	}
	return v / float64(r.Ops)
}

func (r *result) allocsPerOp() float64 { return r.perOp(float64(r.ServerAllocs)) }

// cpuPerOp is d per recorded operation, in microseconds.
func (r *result) cpuPerOp(d time.Duration) float64 {
	if r.Ops == 0 {
		return 0
	}
	return float64(d) / 1e3 / float64(r.Ops)
}

// opFactory makes one worker's operation and its cleanup.
type opFactory func() (op func() error, done func(), err error)

// opsFor returns the factory of scenario's operations against url with
// the given generator ("raw": rawClient; "nethttp": the net/http client).
func opsFor(generator string, tr *http.Transport, url, scenario string, fullEvery int) opFactory {
	if legacyScenario(scenario) {
		return legacyOps(url, scenario, fullEvery) // the raw generator, whatever -generator says
	}
	return func() (func() error, func(), error) {
		if generator == "nethttp" {
			c := newClient(tr, url)
			switch scenario {
			case "echo":
				return c.echoOp, func() {}, nil
			case "confirm":
				return c.confirmOp, func() {}, nil
			}
			return nil, nil, fmt.Errorf("scenario %s: only with -generator raw", scenario)
		}
		c, err := newRawClient(url, fullEvery)
		if err != nil {
			return nil, nil, err
		}
		if n, ok := roundsN(scenario); ok {
			return func() error { return c.roundsOp(n) }, c.close, nil
		}
		if k, suspend, ok := carriedOf(scenario); ok {
			return c.carriedOp(k, suspend), c.close, nil
		}
		if scenario == "confirm" {
			return c.confirmOp, c.close, nil
		}
		return c.echoOp, c.close, nil
	}
}

// measure runs concurrency workers, each with its own operation from
// newOp: warmup first (checked, not recorded), then duration (recorded).
// onMeasure runs when the recorded window starts and onDone when it ends
// (CPU and allocation readings, profiling).
func measure(newOp opFactory, scenario string, concurrency int, warmup, duration time.Duration, onMeasure, onDone func()) *result {
	res := &result{Scenario: scenario, Hist: &hist{}}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		errCount atomic.Uint64
		stop     atomic.Bool
		recordOn atomic.Bool
	)
	lastStateLen.Store(0)
	firstStateLen.Store(0)
	addErr := func(err error) {
		if errCount.Add(1) <= 5 {
			mu.Lock()
			res.FirstErrors = append(res.FirstErrors, err.Error())
			mu.Unlock()
		}
	}
	hists := make([]*hist, concurrency)
	counts := make([]uint64, concurrency)
	for w := range concurrency {
		hists[w] = &hist{}
		wg.Go(func() {
			op, done, err := newOp()
			if err != nil {
				addErr(err)
				return
			}
			defer done()
			h := hists[w]
			for !stop.Load() {
				t0 := time.Now()
				err := op()
				d := time.Since(t0)
				if err != nil {
					addErr(err)
					continue
				}
				if recordOn.Load() { // completed inside the window
					h.record(d)
					counts[w]++
				}
			}
		})
	}
	time.Sleep(warmup)
	if onMeasure != nil {
		onMeasure()
	}
	start := time.Now()
	recordOn.Store(true)
	time.Sleep(duration)
	recordOn.Store(false)
	res.Elapsed = time.Since(start)
	if onDone != nil {
		onDone()
	}
	stop.Store(true)
	wg.Wait()
	for w := range concurrency {
		res.Hist.merge(hists[w])
		res.Ops += counts[w]
	}
	res.Errors = errCount.Load()
	res.StateLen, res.FirstStateLen = lastStateLen.Load(), firstStateLen.Load()
	return res
}
