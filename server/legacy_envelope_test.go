package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
)

// legacyEnvelopeSeeds are bodies of legacy session requests that
// decodeLegacy must take (takes) or leave to the general path: FuzzLegacyEnvelope
// starts from them (and from envelopeSeeds), and
// TestLegacyEnvelopeTakesTheUsualRequests checks which is which.
var legacyEnvelopeSeeds = []struct {
	body  string
	takes bool
}{
	{`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, true},
	{`{"jsonrpc":"2.0","id":"x-1","method":"tools/call","params":{"name":"echo","arguments":{"text":"hé"},"_meta":{"progressToken":"p1"}}}`, true},
	{` { "id" : 3 , "method" : "resources/read" , "params" : { "uri" : "file:///a" } , "jsonrpc" : "2.0" , "extra" : [ 1 ] } `, true},
	{`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, true},
	{`{"jsonrpc":"2.0","id":5,"method":"prompts/list","params":{}}`, true},
	{`{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}}}`, true},
	{`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":null}`, false},
	{`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":[]}`, false},
	{`{"jsonrpc":"2.0","id":9,"method":"ping"}`, false},
	{`{"jsonrpc":"2.0","id":10,"method":"logging/setLevel","params":{"level":"debug"}}`, false},
	{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false},
	{`{"jsonrpc":"2.0","id":11,"result":{"action":"accept"}}`, false},
	{`{"jsonrpc":"2.0","id":12,"error":{"code":-1,"message":"no"}}`, false},
	{`{"jsonrpc":"2.0","id":13,"method":"initialize","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, false},
	{`{"jsonrpc":"1.0","id":14,"method":"tools/list"}`, false},
	{`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"a","name":"b"}}`, false},
	{`{"jsonrpc":"2.0","id":16,"id":17,"method":"tools/call","params":{"name":"a"}}`, false},
	{`{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{"name":"\u0061"}}`, false},
	{`{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":5}}`, false},
	{`{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"Name":"a"}}`, true},
	{`{"jsonrpc":"2.0","id":21,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}}`, false},
	{`{"jsonrpc":"2.0","id":22,"method":"tools/list","params":{}} x`, false},
	{`{"jsonrpc":"2.0","id":23,"method":"x/ext","params":{}}`, false},
	{`[{"jsonrpc":"2.0","id":24,"method":"tools/list"}]`, false},
	{`{"jsonrpc":"2.0","id":25,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7,"traceparent":"00-ab-cd-01","tracestate":"k=v","baggage":"b=1","other":{"x":[1]}}}}`, true},
	{`{"jsonrpc":"2.0","id":26,"method":"tools/list","params":{"cursor":"MA"}}`, true},
	{`{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false},
	{`{"jsonrpc":"2.0","id":28,"method":"tools/call","params":{"name":"echo","requestState":"s"}}`, false},
	{`{"jsonrpc":"2.0","id":29,"method":"tools/call","params":{"name":"echo","_meta":null}}`, false},
	{`{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"echo","arguments":null}}`, true},
}

func TestLegacyEnvelopeTakesTheUsualRequests(t *testing.T) {
	defLim := envLimits(rpcwire.Limits{})
	for _, s := range legacyEnvelopeSeeds {
		_, ok := legacyRequestOf(t, []byte(s.body), &defLim)
		if ok != s.takes {
			t.Errorf("decodeLegacy took it: %v, want %v: %s", ok, s.takes, s.body)
		}
		checkLegacyEnvelope(t, []byte(s.body))
	}
}

// TestLegacyEnvelopeAllocs: a session's tools/call is decoded in two
// allocations, the envelope (message, request and what its params point
// at) and its id.
func TestLegacyEnvelopeAllocs(t *testing.T) {
	body := []byte(legacyEnvelopeSeeds[0].body)
	defLim := envLimits(rpcwire.Limits{})
	n := testing.AllocsPerRun(100, func() {
		if e, _, _ := decodeLegacy(body, &defLim); e == nil {
			t.Fatal("not taken")
		}
	})
	if n > 2 {
		t.Errorf("decodeLegacy: %v allocations, want at most 2", n)
	}
}

// legacyRequestOf is decodeLegacy's request for body, having checked that
// decodeLegacy reports ok exactly when it returns a request or an answer,
// never both.
func legacyRequestOf(t *testing.T, body []byte, lim *jsonscan.Limits) (*legacyEnvelope, bool) {
	t.Helper()
	e, ans, ok := decodeLegacy(body, lim)
	if ok != (e != nil || ans != nil) || e != nil && ans != nil {
		t.Fatalf("decodeLegacy: ok %v with request %v and answer %v: %q", ok, e != nil, ans != nil, body)
	}
	return e, e != nil
}

// checkLegacyEnvelope compares decodeLegacy with the general path: what it
// takes, rpcwire.Decode must decode to the same message, and the legacy
// dispatch's decoding of that message's params (Dispatch) to the same
// params.
func checkLegacyEnvelope(t *testing.T, data []byte) {
	t.Helper()
	defLim := envLimits(rpcwire.Limits{})
	fast, ok := legacyRequestOf(t, data, &defLim)
	if !ok {
		return
	}
	// The walk bounds the body: what it takes is within the limits.
	if err := rpcwire.CheckLimits(data, rpcwire.Limits{}); err != nil {
		t.Fatalf("decodeLegacy took a body over the limits (%v): %q", err, data)
	}
	// And under small limits it takes a body only when CheckLimits passes it.
	small := rpcwire.Limits{MaxDepth: 3, MaxMembers: 4, MaxNumberLength: 8, MaxNumberExponent: 3}
	smallLim := envLimits(small)
	if _, took := legacyRequestOf(t, data, &smallLim); took && rpcwire.CheckLimits(data, small) != nil {
		t.Fatalf("decodeLegacy took a body over small limits: %q", data)
	}
	msg, derr := rpcwire.Decode(data, rpcwire.Limits{})
	if derr != nil {
		t.Fatalf("decodeLegacy took a body rpcwire.Decode refuses (%v): %q", derr, data)
	}
	if !msg.IsRequest() {
		t.Fatalf("decodeLegacy took a body that is not a request: %q", data)
	}
	got := fast.msg
	if got.JSONRPC != msg.JSONRPC || !got.ID.Equal(msg.ID) || got.Method != msg.Method || !bytes.Equal(got.Params, msg.Params) ||
		got.Result != nil || got.Error != nil || (got.Params == nil) != (msg.Params == nil) {
		t.Fatalf("messages differ:\n%+v\n%+v\nbody %q", got, *msg, data)
	}
	if !fast.id.Equal(msg.ID) || fast.method != msg.Method {
		t.Fatalf("the request's id/method differ from the message's: %s %q: %q", fast.id, fast.method, data)
	}
	var slow paramsIn
	if p := bytes.TrimSpace(msg.Params); len(p) > 0 && !bytes.Equal(p, []byte("null")) {
		if err := strictjson.Unmarshal(p, &slow); err != nil {
			t.Fatalf("decodeLegacy took params the dispatch refuses (%v): %q", err, data)
		}
	}
	if !reflect.DeepEqual(fast.p, slow) {
		a, _ := json.Marshal(fast.p)
		b, _ := json.Marshal(slow)
		t.Fatalf("params differ:\n%s\n%s\nbody %q", a, b, data)
	}
}

// FuzzLegacyEnvelope holds decodeLegacy to the general path's result on
// every body it takes.
func FuzzLegacyEnvelope(f *testing.F) {
	for _, s := range legacyEnvelopeSeeds {
		f.Add([]byte(s.body))
	}
	for _, s := range envelopeSeeds {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLegacyEnvelope(t, data)
	})
}

// TestLegacyEnvelopeKnowsEveryField: decodeLegacy reads the members of
// params and _meta it knows by name and skips the others. Every member
// of paramsIn and metaIn, with values of each JSON type, must come out of
// it as the general path decodes it (or be left to that path), so a field
// added to either struct that it would silently skip fails here.
func TestLegacyEnvelopeKnowsEveryField(t *testing.T) {
	values := []string{`"x"`, `{}`, `{"type":"ref/prompt","name":"p"}`, `1`, `true`, `null`, `[]`}
	keys := func(v any) []string {
		var out []string
		for _, f := range reflect.VisibleFields(reflect.TypeOf(v)) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			out = append(out, name)
		}
		return out
	}
	for _, key := range keys(paramsIn{}) {
		for _, v := range values {
			checkLegacyEnvelope(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a",%q:%s}}`, key, v)))
		}
	}
	for _, key := range keys(metaIn{}) {
		for _, v := range values {
			checkLegacyEnvelope(t, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":{%q:%s}}}`, key, v)))
		}
	}
}
