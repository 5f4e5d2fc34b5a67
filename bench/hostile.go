package main

// The hostile scenario (issue 9): bodies an unauthenticated peer can send,
// each beside a benign body of like size, one request at a time against a
// Baton server in its own process. It reports, per body, the answer
// (HTTP status and JSON-RPC code), the client-observed latency (median
// and p90 over sequential requests on loopback), the server process's CPU
// per request, and the ratio to the benign twin, and checks the rule
// "answered within 10x the benign body of its size, or 50 ms, whichever
// is larger" (on the median latency and on the server CPU per request).

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// hostileConfig holds the hostile scenario's flags.
type hostileConfig struct {
	requests int           // requests per body and side
	budget   time.Duration // per row; each side still gets hostileMinRequests
	timeout  time.Duration // client timeout per request
	rows     string        // regexp over row ids; empty means all
	deadline time.Duration // for the whole scenario; later rows are skipped
}

const (
	hostileMinRequests = 3
	hostileMaxBatch    = 5
	// The rule of issue 9: within 10x the benign body, or 50 ms.
	hostileFactor = 10
	hostileFloor  = 50 * time.Millisecond
	// The Baton server's limits (its defaults, set explicitly in
	// newBaton); the bodies are built against them.
	serverMaxBody  = 4 << 20
	serverMaxDepth = 64
	serverMaxState = 64 << 10
)

// rowKind says what kind of retry a row is, which decides its benign twin.
type rowKind int

const (
	// garbageState: a retry with answers and a requestState that is not
	// a token. The benign twin is the same retry with a long note.
	garbageState rowKind = iota
	// noState: a first call. The benign twin is a valid first call with
	// a long note (answered input_required, its state sealed over the
	// note); a hostile body may be refused as -32602 or as a tool result
	// with isError (schema validation).
	noState
	// validState: a retry carrying a state the server really issued (a
	// first call costs nothing, so anyone has one). The benign twin is a
	// valid retry of a call with a long note (answered complete).
	validState
)

func (k rowKind) String() string {
	return [...]string{"garbage state", "no state", "valid state"}[k]
}

// hostileRow is one hostile body.
type hostileRow struct {
	id    string
	what  string
	kind  rowKind
	issue bool // a row of the issue's table
	ref   bool // the benign body measured against itself (noise check)
	build func(e *hostileEnv) string
}

// hostileEnv is what row builders need from the running server.
type hostileEnv struct {
	baseState string // a valid state for baseArgs
}

// ---------------------------------------------------------------- bodies

const (
	baseArgs     = `{"to":"acct-1","amount":5}`
	answerOK     = `"confirm":{"action":"accept","content":{"confirm":true}}`
	garbageToken = "garbage-state"
)

// args returns the base arguments with members (each starting with a
// comma) appended.
func args(members string) string {
	return `{"to":"acct-1","amount":5` + members + `}`
}

// call is the whole request body: params members (each ending with a
// comma) and the usual _meta.
func call(params string) string {
	return callMeta(params, metaJSON)
}

func callMeta(params, meta string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + submitTool + `",` + params + meta + `}}`
}

// retry is a retry of submit with arguments a, inputResponses ir and
// requestState st (JSON-quoted here).
func retry(a, ir, st string) string {
	return call(`"arguments":` + a + `,"inputResponses":` + ir + `,"requestState":` + quote(st) + `,`)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// repeat joins n items made by f (called with 0..n-1) with sep.
func repeat(n int, sep string, f func(i int) string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(f(i))
	}
	return b.String()
}

// digits returns n decimal digits, the last one non-zero.
func digits(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = '1' + byte(i%9)
	}
	return string(b)
}

// jwtShaped returns a token of exactly size bytes with the server's key id
// and a garbage payload, so it passes every check up to the signature.
func jwtShaped(size int) string {
	h := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","kid":"bench-1","typ":"JWT"}`))
	sig := strings.Repeat("A", 43)
	n := size - len(h) - len(sig) - 2
	return h + "." + strings.Repeat("e", n) + "." + sig
}

// jwtHeader returns a token whose header is the given JSON.
func jwtHeader(header string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(header)) + ".e30." + strings.Repeat("A", 43)
}

// atSize pads a body built by f (given a padding of spaces) to exactly
// size bytes; f must place the padding where whitespace is allowed.
func atSize(size int, f func(pad string) string) string {
	n := size - len(f(""))
	if n < 0 {
		n = 0
	}
	return f(strings.Repeat(" ", n))
}

// zeros returns the members of an array of zeros filling about n bytes.
func zeros(n int) string {
	return "[" + strings.Repeat("0,", max(n/2-1, 0)) + "0]"
}

// deepArgs returns arguments with 5,000 members, each arrays nested to
// the server's depth limit (the body, params and arguments take 3 levels).
func deepArgs() string {
	n := serverMaxDepth - 3
	d := strings.Repeat("[", n) + strings.Repeat("]", n)
	return args("," + repeat(5000, ",", func(i int) string { return fmt.Sprintf(`"d%04d":`, i) + d }))
}

// zerosBody returns a retry of exactly size bytes whose arguments hold an
// array of zeros, with requestState st.
func zerosBody(size int, st string) string {
	return atSize(size, func(pad string) string {
		return retry(args(`,"z":`+zeros(serverMaxBody-1024-len(st))+pad), "{"+answerOK+"}", st)
	})
}

func keys40k(format string, value string) string {
	return repeat(40000, ",", func(i int) string { return fmt.Sprintf(format, i) + ":" + value })
}

// hostileRows lists the hostile bodies. The issue's rows come first.
var hostileRows = []hostileRow{
	{id: "ref-420k", what: "benign: a 420 KiB string argument (measured against itself)", kind: garbageState, issue: true, ref: true,
		build: func(e *hostileEnv) string { return benignBody(e, garbageState, 420<<10, nil) }},
	{id: "ir-40k", what: "inputResponses with 40,000 keys", kind: garbageState, issue: true,
		build: func(*hostileEnv) string {
			return retry(baseArgs, "{"+keys40k(`"k%05d"`, `{"action":"accept","content":{}}`)+"}", garbageToken)
		}},
	{id: "args-40k", what: "arguments with 40,000 keys", kind: garbageState, issue: true,
		build: func(*hostileEnv) string {
			return retry(args(","+keys40k(`"k%05d"`, "0")), "{"+answerOK+"}", garbageToken)
		}},
	{id: "exp-big", what: "twenty numbers 1e999999 in the arguments", kind: garbageState, issue: true,
		build: func(*hostileEnv) string {
			return retry(args(","+repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e999999`, i) })), "{"+answerOK+"}", garbageToken)
		}},
	{id: "exp-small", what: "twenty numbers 1e-999999 in the arguments", kind: garbageState, issue: true,
		build: func(*hostileEnv) string {
			return retry(args(","+repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e-999999`, i) })), "{"+answerOK+"}", garbageToken)
		}},

	{id: "nest-keys-2", what: "arguments: 200 objects of 200 keys each", kind: garbageState,
		build: func(*hostileEnv) string {
			inner := func(int) string {
				return "{" + repeat(200, ",", func(j int) string { return fmt.Sprintf(`"b%03d":0`, j) }) + "}"
			}
			return retry(args(`,"x":{`+repeat(200, ",", func(i int) string { return fmt.Sprintf(`"a%03d":`, i) + inner(i) })+"}"), "{"+answerOK+"}", garbageToken)
		}},
	{id: "nest-keys-3", what: "arguments: 35 keys at each of 3 levels (42,875 leaves)", kind: garbageState,
		build: func(*hostileEnv) string {
			var level func(d int) string
			level = func(d int) string {
				if d == 3 {
					return "0"
				}
				return "{" + repeat(35, ",", func(i int) string { return fmt.Sprintf(`"%c%02d":`, 'a'+d, i) + level(d+1) }) + "}"
			}
			return retry(args(`,"x":`+level(0)), "{"+answerOK+"}", garbageToken)
		}},
	{id: "num-int-100k", what: "an integer of 100,000 digits in the arguments", kind: garbageState,
		build: func(*hostileEnv) string { return retry(args(`,"n":`+digits(100000)), "{"+answerOK+"}", garbageToken) }},
	{id: "num-frac-100k", what: "a fraction of 100,000 digits (0.123…) in the arguments", kind: garbageState,
		build: func(*hostileEnv) string { return retry(args(`,"n":0.`+digits(100000)), "{"+answerOK+"}", garbageToken) }},
	{id: "num-exp-100k", what: "100,000 digits with an exponent (1.123…e100000)", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(`,"n":1.`+digits(100000)+"e100000"), "{"+answerOK+"}", garbageToken)
		}},
	{id: "exp-answer", what: "an answer with twenty numbers 1e999999", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(baseArgs, `{"confirm":{"action":"accept","content":{"confirm":true,`+
				repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e999999`, i) })+`}}}`, garbageToken)
		}},
	{id: "exp-ir", what: "inputResponses: twenty members 1e999999", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(baseArgs, "{"+repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e999999`, i) })+"}", garbageToken)
		}},
	{id: "deep-limit", what: "5,000 arrays nested to the depth limit (64)", kind: garbageState,
		build: func(*hostileEnv) string { return retry(deepArgs(), "{"+answerOK+"}", garbageToken) }},
	{id: "deep-limit-obj", what: "3,000 objects nested to the depth limit (64)", kind: garbageState,
		build: func(*hostileEnv) string {
			n := serverMaxDepth - 3
			d := strings.Repeat(`{"a":`, n) + "0" + strings.Repeat("}", n)
			return retry(args(","+repeat(3000, ",", func(i int) string { return fmt.Sprintf(`"o%04d":`, i) + d })), "{"+answerOK+"}", garbageToken)
		}},
	{id: "deep-over", what: "nesting one level past the limit (65)", kind: garbageState,
		build: func(*hostileEnv) string {
			n := serverMaxDepth - 2
			return retry(args(`,"d":`+strings.Repeat("[", n)+strings.Repeat("]", n)), "{"+answerOK+"}", garbageToken)
		}},
	{id: "deep-over-200k", what: "nesting 200,000 levels deep", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(`,"d":`+strings.Repeat("[", 200000)+strings.Repeat("]", 200000)), "{"+answerOK+"}", garbageToken)
		}},
	{id: "esc-420k", what: `a 420 KiB string of \u00e9 escapes`, kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(`,"note":"`+strings.Repeat(`\u00e9`, 420<<10/6)+`"`), "{"+answerOK+"}", garbageToken)
		}},
	{id: "esc-surrogate", what: `a 420 KiB string of lone surrogates \ud800`, kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(`,"note":"`+strings.Repeat(`\ud800`, 420<<10/6)+`"`), "{"+answerOK+"}", garbageToken)
		}},
	{id: "esc-keys-40k", what: `arguments with 40,000 keys written with \u escapes`, kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(","+keys40k(`"\u006b\u0065\u0079%05d"`, "0")), "{"+answerOK+"}", garbageToken)
		}},
	{id: "ir-big-answers", what: "400 inputResponses, each a 4 KiB answer", kind: garbageState,
		build: func(*hostileEnv) string {
			a := `{"action":"accept","content":{"confirm":true,"text":"` + strings.Repeat("x", 4<<10) + `"}}`
			return retry(baseArgs, "{"+repeat(400, ",", func(i int) string { return fmt.Sprintf(`"k%03d":`, i) + a })+"}", garbageToken)
		}},
	{id: "state-limit", what: "requestState of 64 KiB (the limit), JWT-shaped, known kid", kind: garbageState,
		build: func(*hostileEnv) string { return retry(baseArgs, "{"+answerOK+"}", jwtShaped(serverMaxState)) }},
	{id: "state-over", what: "requestState of 64 KiB + 1 byte", kind: garbageState,
		build: func(*hostileEnv) string { return retry(baseArgs, "{"+answerOK+"}", jwtShaped(serverMaxState+1)) }},
	{id: "state-3m", what: "requestState of 3 MiB", kind: garbageState,
		build: func(*hostileEnv) string { return retry(baseArgs, "{"+answerOK+"}", jwtShaped(3<<20)) }},
	{id: "state-kid", what: "requestState: JWT whose header has a 47 KB kid", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(baseArgs, "{"+answerOK+"}", jwtHeader(`{"alg":"HS256","kid":"`+strings.Repeat("k", 47000)+`"}`))
		}},
	{id: "state-hdr-keys", what: "requestState: JWT header with 4,000 keys", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(baseArgs, "{"+answerOK+"}", jwtHeader(`{"alg":"HS256","kid":"bench-1",`+
				repeat(4000, ",", func(i int) string { return fmt.Sprintf(`"x%04d":0`, i) })+"}"))
		}},
	{id: "state-hdr-exp", what: "requestState: JWT header with twenty 1e999999", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(baseArgs, "{"+answerOK+"}", jwtHeader(`{"alg":"HS256","kid":"bench-1",`+
				repeat(20, ",", func(i int) string { return fmt.Sprintf(`"x%02d":1e999999`, i) })+"}"))
		}},
	{id: "utf8-420k", what: "a 420 KiB string of invalid UTF-8 (0xff)", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(`,"note":"`+strings.Repeat("\xff", 420<<10)+`"`), "{"+answerOK+"}", garbageToken)
		}},
	{id: "utf8-keys-40k", what: "arguments with 40,000 keys holding invalid UTF-8", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(","+keys40k("\"\xff\xfe%05d\"", "0")), "{"+answerOK+"}", garbageToken)
		}},
	{id: "dup-same-40k", what: "arguments: one key 40,000 times", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(","+repeat(40000, ",", func(int) string { return `"k":0` })), "{"+answerOK+"}", garbageToken)
		}},
	{id: "dup-last-40k", what: "arguments: 40,000 keys, the last a duplicate of the first", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(args(","+keys40k(`"k%05d"`, "0")+`,"k00000":1`), "{"+answerOK+"}", garbageToken)
		}},
	{id: "dup-ir-40k", what: "inputResponses: one key 40,000 times", kind: garbageState,
		build: func(*hostileEnv) string {
			return retry(baseArgs, "{"+repeat(40000, ",", func(int) string { return answerOK })+"}", garbageToken)
		}},
	{id: "env-dup-40k", what: "params: the arguments member 40,000 times", kind: garbageState,
		build: func(*hostileEnv) string {
			return call(strings.Repeat(`"arguments":`+baseArgs+`,`, 40000) + `"inputResponses":{` + answerOK + `},"requestState":"` + garbageToken + `",`)
		}},
	{id: "env-caps-40k", what: "_meta: experimental capabilities with 40,000 keys", kind: garbageState,
		build: func(*hostileEnv) string {
			meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
				`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"experimental":{` + keys40k(`"k%05d"`, "{}") + `}},` +
				`"io.modelcontextprotocol/clientInfo":{"name":"baton-bench","version":"1.0.0"}}`
			return callMeta(`"arguments":`+baseArgs+`,"inputResponses":{`+answerOK+`},"requestState":"`+garbageToken+`",`, meta)
		}},
	{id: "size-limit", what: "a body of exactly 4 MiB (the limit): an array of 2 million zeros", kind: garbageState,
		build: func(*hostileEnv) string { return zerosBody(serverMaxBody, garbageToken) }},
	{id: "size-over", what: "a body of 4 MiB + 1 byte", kind: garbageState,
		build: func(*hostileEnv) string { return zerosBody(serverMaxBody+1, garbageToken) }},

	{id: "ns-args-40k", what: "no state: arguments with 40,000 keys (to schema validation)", kind: noState,
		build: func(*hostileEnv) string { return call(`"arguments":` + args(","+keys40k(`"k%05d"`, "0")) + `,`) }},
	{id: "ns-exp-20", what: "no state: twenty numbers 1e999999 in the arguments", kind: noState,
		build: func(*hostileEnv) string {
			return call(`"arguments":` + args(","+repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e999999`, i) })) + `,`)
		}},
	{id: "ns-amount-exp", what: "no state: amount 1e999999 (a number with exclusiveMinimum)", kind: noState,
		build: func(*hostileEnv) string { return call(`"arguments":{"to":"acct-1","amount":1e999999},`) }},
	{id: "ns-amount-negexp", what: "no state: amount 1e-999999", kind: noState,
		build: func(*hostileEnv) string { return call(`"arguments":{"to":"acct-1","amount":1e-999999},`) }},
	{id: "ns-amount-100k", what: "no state: amount of 100,000 digits (0.123…)", kind: noState,
		build: func(*hostileEnv) string {
			return call(`"arguments":{"to":"acct-1","amount":0.` + digits(100000) + `},`)
		}},
	{id: "ns-ir-40k", what: "no state: inputResponses with 40,000 keys", kind: noState,
		build: func(*hostileEnv) string {
			return call(`"arguments":` + baseArgs + `,"inputResponses":{` + keys40k(`"k%05d"`, `{"action":"accept","content":{}}`) + `},`)
		}},

	{id: "vs-args-40k", what: "valid state, arguments with 40,000 keys", kind: validState,
		build: func(e *hostileEnv) string {
			return retry(args(","+keys40k(`"k%05d"`, "0")), "{"+answerOK+"}", e.baseState)
		}},
	{id: "vs-exp-20", what: "valid state, twenty numbers 1e999999 in the arguments", kind: validState,
		build: func(e *hostileEnv) string {
			return retry(args(","+repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e999999`, i) })), "{"+answerOK+"}", e.baseState)
		}},
	{id: "vs-num-frac-100k", what: "valid state, a fraction of 100,000 digits in the arguments", kind: validState,
		build: func(e *hostileEnv) string {
			return retry(args(`,"n":0.`+digits(100000)), "{"+answerOK+"}", e.baseState)
		}},
	{id: "vs-deep-limit", what: "valid state, 5,000 arrays nested to the depth limit", kind: validState,
		build: func(e *hostileEnv) string { return retry(deepArgs(), "{"+answerOK+"}", e.baseState) }},
	{id: "vs-size-limit", what: "valid state, a body of exactly 4 MiB: an array of 2 million zeros", kind: validState,
		build: func(e *hostileEnv) string { return zerosBody(serverMaxBody, e.baseState) }},
	{id: "vs-ir-40k", what: "valid state, inputResponses with 40,000 keys, then a wrong answer", kind: validState,
		build: func(e *hostileEnv) string {
			return retry(baseArgs, "{"+keys40k(`"k%05d"`, `{"action":"accept","content":{}}`)+
				`,"confirm":{"action":"accept","content":{"confirm":"yes"}}}`, e.baseState)
		}},
	{id: "vs-answer-40k", what: "valid state, an answer with 40,000 keys, then a wrong value", kind: validState,
		build: func(e *hostileEnv) string {
			return retry(baseArgs, `{"confirm":{"action":"accept","content":{`+keys40k(`"k%05d"`, "0")+`,"confirm":"yes"}}}`, e.baseState)
		}},
	{id: "vs-answer-exp", what: "valid state, an answer with twenty 1e999999 and confirm 1e999999", kind: validState,
		build: func(e *hostileEnv) string {
			return retry(baseArgs, `{"confirm":{"action":"accept","content":{`+
				repeat(20, ",", func(i int) string { return fmt.Sprintf(`"n%02d":1e999999`, i) })+`,"confirm":1e999999}}}`, e.baseState)
		}},
}

// benignBody returns a benign body of kind k and about size bytes: the
// base arguments with a note of plain letters. For validState it asks the
// server for a state bound to those arguments (first), so the retry is
// valid.
func benignBody(e *hostileEnv, k rowKind, size int, first func(a string) (string, error)) string {
	note := func(pad string) string { return args(`,"note":"` + pad + `"`) }
	build := func(pad, st string) string {
		switch k {
		case noState:
			return call(`"arguments":` + note(pad) + `,`)
		case validState:
			return retry(note(pad), "{"+answerOK+"}", st)
		default:
			return retry(note(pad), "{"+answerOK+"}", garbageToken)
		}
	}
	st := ""
	if k == validState {
		st = e.baseState // its length stands in for the new state's
	}
	pad := strings.Repeat("x", max(size-len(build("", st)), 0))
	if k == validState && first != nil {
		if s, err := first(note(pad)); err == nil {
			st = s
		}
	}
	return build(pad, st)
}

func listHostile(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tkind\tbody")
	for _, r := range hostileRows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.id, r.kind, r.what)
	}
	tw.Flush()
}

// ---------------------------------------------------------------- answers

// answer is what one response was.
type answer struct {
	status int
	code   int    // JSON-RPC error code, 0 if none
	kind   string // "error", "isError", "complete", "input_required", "timeout", "transport", "not JSON-RPC"
	msg    string
}

func (a answer) String() string {
	switch a.kind {
	case "timeout", "transport":
		return a.kind
	case "error":
		return fmt.Sprintf("%d %d", a.status, a.code)
	default:
		return fmt.Sprintf("%d %s", a.status, a.kind)
	}
}

// clear reports whether a is a clear refusal: a JSON-RPC error with a 4xx
// status, or (for a first call, which schema validation refuses) a tool
// result with isError.
func (a answer) clear(k rowKind) bool {
	switch a.kind {
	case "error":
		return a.status >= 400 && a.status < 500
	case "isError":
		return k == noState && a.status == http.StatusOK
	}
	return false
}

type hostileWire struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Result *struct {
		ResultType   string `json:"resultType"`
		IsError      bool   `json:"isError"`
		RequestState string `json:"requestState"`
		Content      []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
}

// hostileClient posts bodies to one server, one at a time.
type hostileClient struct {
	http   *http.Client
	url    string
	header http.Header
	buf    bytes.Buffer
}

func newHostileClient(url string, timeout time.Duration) *hostileClient {
	return &hostileClient{
		http: &http.Client{Timeout: timeout, Transport: &http.Transport{
			MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1, DisableCompression: true, IdleConnTimeout: time.Minute,
		}},
		url: url,
		header: http.Header{
			"Content-Type":         {"application/json"},
			"Accept":               {"application/json, text/event-stream"},
			"Mcp-Protocol-Version": {protocolVersion},
			"Mcp-Method":           {"tools/call"},
			"Mcp-Name":             {submitTool},
		},
	}
}

// post sends body and classifies the answer; it also returns the state of
// an input_required result.
func (c *hostileClient) post(body []byte) (answer, string) {
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return answer{kind: "transport", msg: err.Error()}, ""
	}
	req.Header = c.header
	res, err := c.http.Do(req)
	if err != nil {
		var te interface{ Timeout() bool }
		if errors.As(err, &te) && te.Timeout() {
			return answer{kind: "timeout", msg: err.Error()}, ""
		}
		return answer{kind: "transport", msg: err.Error()}, ""
	}
	c.buf.Reset()
	_, err = c.buf.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return answer{status: res.StatusCode, kind: "transport", msg: err.Error()}, ""
	}
	a := answer{status: res.StatusCode, kind: "not JSON-RPC", msg: truncate(c.buf.String(), 160)}
	var w hostileWire
	if json.Unmarshal(c.buf.Bytes(), &w) != nil {
		return a, ""
	}
	switch {
	case w.Error != nil:
		a.kind, a.code, a.msg = "error", w.Error.Code, truncate(w.Error.Message, 160)
	case w.Result != nil && w.Result.IsError:
		a.kind = "isError"
		if len(w.Result.Content) > 0 {
			a.msg = truncate(w.Result.Content[0].Text, 160)
		}
	case w.Result != nil && w.Result.ResultType != "":
		a.kind = w.Result.ResultType
		return a, w.Result.RequestState
	}
	return a, ""
}

func truncate(s string, n int) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "?")), " ")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// first makes a first call with arguments a and returns its state.
func (c *hostileClient) first(a string) (string, error) {
	ans, st := c.post([]byte(call(`"arguments":` + a + `,`)))
	if ans.kind != "input_required" || st == "" {
		return "", fmt.Errorf("first call: want 200 input_required with a state, got %s %s", ans, ans.msg)
	}
	return st, nil
}

// ---------------------------------------------------------------- runs

// side is one body's measurements.
type side struct {
	lat     []time.Duration
	cpu     time.Duration // server CPU over all batches
	answers []answer
	timeout bool
	elapsed time.Duration
}

func (s *side) n() int { return len(s.lat) }

func (s *side) quantile(q float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	v := slices.Clone(s.lat)
	slices.Sort(v)
	i := int(q*float64(len(v))+0.5) - 1 // nearest rank
	return v[min(max(i, 0), len(v)-1)]
}

func (s *side) cpuPerReq() time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.cpu / time.Duration(len(s.lat))
}

// answer is the answer all requests got, or the first odd one out.
func (s *side) answer() (answer, bool) {
	if len(s.answers) == 0 {
		return answer{kind: "transport", msg: "no request"}, false
	}
	for _, a := range s.answers[1:] {
		if a.String() != s.answers[0].String() {
			return a, false
		}
	}
	return s.answers[0], true
}

// rowResult is one row's outcome.
type rowResult struct {
	row              hostileRow
	size, benignSize int
	hostile, benign  side
	verdict          string
	pass             bool
}

// hostileRun holds the server process and the client.
type hostileRun struct {
	cfg   hostileConfig
	child *child
	cli   *hostileClient
	env   hostileEnv
	gcCPU time.Duration // server CPU of an empty batch (its collection and CPU reads)
	err   error         // first failed child command
}

func (h *hostileRun) start() error {
	c, urls, err := startChild()
	if err != nil {
		return err
	}
	h.child, h.cli = c, newHostileClient(urls["baton"], h.cfg.timeout)
	st, err := h.cli.first(baseArgs)
	if err != nil {
		return err
	}
	h.env.baseState = st
	// What a batch costs the server with no request in it: subtracted
	// from every batch.
	var empty []time.Duration
	for range 9 {
		h.gc()
		cpu0 := h.serverCPU()
		h.gc()
		empty = append(empty, h.serverCPU()-cpu0)
	}
	slices.Sort(empty)
	h.gcCPU = empty[len(empty)/2]
	return h.err
}

func (h *hostileRun) serverCPU() time.Duration {
	v, err := h.child.query("cpu")
	if err != nil && h.err == nil {
		h.err = err
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return time.Duration(n)
}

func (h *hostileRun) gc() {
	if err := h.child.do("gc"); err != nil && h.err == nil {
		h.err = err
	}
}

// batch sends body k times. The server CPU of the batch is read around
// it, with a collection before (so earlier garbage is not counted) and
// one after (so this batch's garbage is); the CPU of an empty batch is
// subtracted.
func (h *hostileRun) batch(s *side, body []byte, k int) {
	h.gc()
	cpu0 := h.serverCPU()
	t0 := time.Now()
	for range k {
		t := time.Now()
		a, _ := h.cli.post(body)
		d := time.Since(t)
		s.answers = append(s.answers, a)
		if a.kind == "timeout" {
			s.timeout = true
			break
		}
		s.lat = append(s.lat, d)
	}
	s.elapsed += time.Since(t0)
	if s.timeout {
		return // the server may still be busy: its CPU says nothing
	}
	h.gc()
	s.cpu += max(h.serverCPU()-cpu0-h.gcCPU, 0)
}

// nextBatch is how many requests the side's next batch sends: up to
// hostileMaxBatch, fewer for slow bodies (a batch aims at a sixth of the
// row's budget), at least what the minimum still needs once the budget is
// spent, and nothing once the side is done.
func (h *hostileRun) nextBatch(s *side, spent bool) int {
	left := h.cfg.requests - s.n()
	if spent {
		left = hostileMinRequests - s.n()
	}
	if left <= 0 {
		return 0
	}
	k := hostileMaxBatch
	if med := s.quantile(0.5); med > 0 {
		k = int(h.cfg.budget / 6 / med)
	}
	return min(max(k, 1), left, hostileMaxBatch)
}

func (h *hostileRun) row(r hostileRow) *rowResult {
	hb := []byte(r.build(&h.env))
	bb := []byte(benignBody(&h.env, r.kind, len(hb), h.cli.first))
	if r.ref {
		bb = hb
	}
	res := &rowResult{row: r, size: len(hb), benignSize: len(bb)}
	h.cli.post(bb) // warm up: connection, buffers
	start := time.Now()
	kb, kh := 1, 1
	for kb > 0 || kh > 0 {
		if kb > 0 {
			h.batch(&res.benign, bb, kb)
		}
		if kh > 0 {
			h.batch(&res.hostile, hb, kh)
		}
		if res.hostile.timeout || res.benign.timeout {
			break
		}
		spent := time.Since(start) > h.cfg.budget
		kb, kh = h.nextBatch(&res.benign, spent), h.nextBatch(&res.hostile, spent)
	}
	res.judge(h.cfg.timeout)
	return res
}

// limit is the rule's bound for a hostile measurement given the benign
// one: 10x, or 50 ms, whichever is larger.
func limit(benign time.Duration) time.Duration {
	return max(hostileFactor*benign, hostileFloor)
}

// benignWanted reports whether a is what the benign twin of kind k and
// size bytes must get, so that the row compares like with like.
func benignWanted(a answer, k rowKind, size int) bool {
	switch {
	case size > serverMaxBody:
		return a.kind == "error" && a.status == http.StatusRequestEntityTooLarge
	case k == noState:
		return a.kind == "input_required" && a.status == http.StatusOK
	case k == validState:
		return a.kind == "complete" && a.status == http.StatusOK
	default:
		return a.kind == "error" && a.status == http.StatusBadRequest && strings.Contains(a.msg, "requestState")
	}
}

// judge sets the verdict: the hostile body must get the same clear error
// every time, within the rule's bound on both the median latency and the
// server CPU per request.
func (res *rowResult) judge(timeout time.Duration) {
	ha, hsame := res.hostile.answer()
	ba, bsame := res.benign.answer()
	var fails []string
	switch {
	case res.hostile.timeout:
		fails = append(fails, "no answer within "+fmtDur(timeout))
	case res.benign.timeout || !bsame || !benignWanted(ba, res.row.kind, res.benignSize):
		res.verdict = "INVALID (benign body answered " + ba.String() + ")"
		return
	case res.row.ref:
		res.verdict, res.pass = "reference", true
		return
	default:
		if !ha.clear(res.row.kind) {
			fails = append(fails, "not a clear error: "+ha.String())
		}
		if !hsame {
			fails = append(fails, "answers differ")
		}
		if res.hostile.quantile(0.5) > limit(res.benign.quantile(0.5)) {
			fails = append(fails, "latency")
		}
		if res.hostile.cpuPerReq() > limit(res.benign.cpuPerReq()) {
			fails = append(fails, "CPU")
		}
	}
	if len(fails) == 0 {
		res.verdict, res.pass = "PASS", true
		return
	}
	res.verdict = "FAIL (" + strings.Join(fails, "; ") + ")"
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	r := float64(a) / float64(b)
	if r >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.1f", r)
}

func fmtSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
}

// runHostile runs the hostile scenario and prints its table. It reports
// false if any row failed.
func runHostile(cfg hostileConfig) (bool, error) {
	var re *regexp.Regexp
	if cfg.rows != "" {
		var err error
		if re, err = regexp.Compile(cfg.rows); err != nil {
			return false, fmt.Errorf("-hostile-rows: %w", err)
		}
	}
	if cfg.requests < hostileMinRequests {
		cfg.requests = hostileMinRequests
	}
	h := &hostileRun{cfg: cfg}
	if err := h.start(); err != nil {
		return false, err
	}
	defer func() { h.child.close() }()
	printMachine()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("# load average %s\n", strings.Join(strings.Fields(string(b))[:3], " "))
	}
	fmt.Printf("# hostile: %d requests per body and side (at least %d once the %s row budget is spent), %s timeout each, sequential on one keep-alive connection; an empty batch costs the server %s (subtracted)\n",
		cfg.requests, hostileMinRequests, cfg.budget, cfg.timeout, fmtDur(h.gcCPU))
	var (
		results []*rowResult
		skipped []string
	)
	t0 := time.Now()
	for _, r := range hostileRows {
		if re != nil && !re.MatchString(r.id) {
			continue
		}
		if cfg.deadline > 0 && time.Since(t0) > cfg.deadline {
			skipped = append(skipped, r.id)
			continue
		}
		res := h.row(r)
		if h.err != nil {
			return false, h.err
		}
		results = append(results, res)
		ha, _ := res.hostile.answer()
		ba, _ := res.benign.answer()
		fmt.Printf("# %-16s %9s  hostile %-12s p50 %8s cpu %8s (n %2d)  benign %-18s p50 %8s cpu %8s (n %2d)  %s\n",
			r.id, fmtSize(res.size), ha, fmtDur(res.hostile.quantile(0.5)), fmtDur(res.hostile.cpuPerReq()), res.hostile.n(),
			ba, fmtDur(res.benign.quantile(0.5)), fmtDur(res.benign.cpuPerReq()), res.benign.n(), res.verdict)
		if ha.msg != "" {
			fmt.Printf("#   hostile answer: %s\n", ha.msg)
		}
		if res.hostile.timeout || res.benign.timeout {
			// The server may still be working on it: start a fresh one.
			fmt.Println("#   restarting the server process")
			h.child.close()
			if err := h.start(); err != nil {
				return false, err
			}
		}
	}
	fmt.Printf("# hostile scenario took %s\n", fmtDur(time.Since(t0)))
	ok := hostileTable(os.Stdout, results)
	if len(skipped) > 0 {
		fmt.Printf("Not run (-hostile-deadline %s passed): %s.\n", cfg.deadline, strings.Join(skipped, ", "))
		ok = false
	}
	return ok, nil
}

// hostileTable prints the markdown table and reports whether every row
// passed.
func hostileTable(w io.Writer, results []*rowResult) bool {
	fmt.Fprintf(w, "\n## hostile: each body beside a benign body of like size (rule: within %dx the benign, or %s)\n\n", hostileFactor, fmtDur(hostileFloor))
	fmt.Fprintln(w, "| id | hostile body | size | answer | benign answer | p50 / p90 | benign p50 / p90 | server CPU/req | benign CPU/req | ratio p50 / CPU | n | verdict |")
	fmt.Fprintln(w, "|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---|")
	failed := 0
	for _, r := range results {
		ha, _ := r.hostile.answer()
		ba, _ := r.benign.answer()
		what := r.row.what
		if r.row.issue {
			what += " (issue)"
		}
		if r.row.kind != garbageState {
			what = r.row.kind.String() + ": " + strings.TrimPrefix(strings.TrimPrefix(what, "no state: "), "valid state, ")
		}
		lat, cpu, ratios := "–", "–", "–"
		if r.hostile.n() > 0 {
			lat = fmtDur(r.hostile.quantile(0.5)) + " / " + fmtDur(r.hostile.quantile(0.9))
			cpu = fmtDur(r.hostile.cpuPerReq())
			ratios = ratio(r.hostile.quantile(0.5), r.benign.quantile(0.5)) + " / " + ratio(r.hostile.cpuPerReq(), r.benign.cpuPerReq())
		}
		if r.hostile.timeout {
			lat = "timeout"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s / %s | %s | %s | %s | %d/%d | %s |\n",
			r.row.id, strings.ReplaceAll(what, "|", `\|`), fmtSize(r.size), ha, ba, lat,
			fmtDur(r.benign.quantile(0.5)), fmtDur(r.benign.quantile(0.9)),
			cpu, fmtDur(r.benign.cpuPerReq()), ratios, r.hostile.n(), r.benign.n(), r.verdict)
		if !r.pass {
			failed++
		}
	}
	fmt.Fprintf(w, "\n%d of %d hostile bodies PASS", len(results)-failed, len(results))
	if failed > 0 {
		fmt.Fprintf(w, "; %d FAIL", failed)
	}
	fmt.Fprintln(w, ".")
	return failed == 0
}
