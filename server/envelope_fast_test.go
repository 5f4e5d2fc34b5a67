package server

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// envelopeSeeds are bodies decodeEnvelope must take (the first ones) or
// leave to the library (the rest): FuzzEnvelope starts from them and
// TestEnvelopeTakesTheUsualRequests checks which is which.
var envelopeSeeds = []struct {
	body  string
	takes bool
}{
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1.0"}}}}`, true},
	{`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"confirm","arguments":{"id":42},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"requestState":"eyJ.eyJ.sig.ct","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"sampling":{"tools":{}},"roots":{"listChanged":true},"extensions":{"io.modelcontextprotocol/tasks":{}},"experimental":{"x":[1,"y",null]}},"progressToken":"p1","io.modelcontextprotocol/logLevel":"info","traceparent":"00-ab-cd-01","tracestate":"k=v","baggage":"b=1"}}}`, true},
	{` { "jsonrpc" : "2.0" , "id" : -7 , "method" : "resources/read" , "params" : { "uri" : "file:///é" , "_meta" : { "io.modelcontextprotocol/protocolVersion" : "2026-07-28" , "io.modelcontextprotocol/clientCapabilities" : { } , "unknown" : [ 1.5e3 , { } ] } , "cursor" : "MA" } , "extra" : true } `, true},
	{`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, true},
	{`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"t1","arguments":null,"_meta":{}}}`, true},
	{`{"jsonrpc":"2.0","id":4,"method":"tasks/get","params":{"taskId":"t1","_meta":null}}`, false},
	{`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","name":"b","_meta":{}}}`, false},
	{`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"\u0061","_meta":{}}}`, false},
	{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":null,"_meta":{}}}`, false},
	{`{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}`, false},
	{`{"jsonrpc":"2.0","method":"tools/list","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":8,"method":"initialize","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":9,"method":"x/ext","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, false},
	{`{"jsonrpc":"2.0","id":11,"result":{}}`, false},
	{`{"jsonrpc":"1.0","id":12,"method":"tools/list","params":{}}`, false},
	{`{"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":true}}}}}`, false},
	{`{"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientInfo":{"name":"c","icons":[]}}}}`, false},
	{`{"jsonrpc":"2.0","id":15,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"b"}}}`, false},
	{`{"jsonrpc":"2.0","id":16,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"extensions":{"a":1,"a":2}}}}}`, false},
	{`{"jsonrpc":"2.0","id":17,"method":"tools/list","params":{"x":[1,]}}`, false},
	{`{"jsonrpc":"2.0","id":18,"method":"tools/list","params":{}} x`, false},
	{"{\"jsonrpc\":\"2.0\",\"id\":19,\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}", false},
	{`{"jsonrpc":"2.0","id":20,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":1}}}}}`, false},
}

func TestEnvelopeTakesTheUsualRequests(t *testing.T) {
	for _, s := range envelopeSeeds {
		_, ok := decodeEnvelope([]byte(s.body), &defaultEnvLimits)
		if ok != s.takes {
			t.Errorf("decodeEnvelope took it: %v, want %v: %s", ok, s.takes, s.body)
		}
		checkEnvelope(t, []byte(s.body))
	}
}

// TestEnvelopeAllocs: the usual tools/call's envelope is decoded in two
// allocations, the request (with what its params point at) and its id.
func TestEnvelopeAllocs(t *testing.T) {
	body := []byte(envelopeSeeds[0].body)
	n := testing.AllocsPerRun(100, func() {
		if _, ok := decodeEnvelope(body, &defaultEnvLimits); !ok {
			t.Fatal("not taken")
		}
	})
	if n > 2 {
		t.Errorf("decodeEnvelope: %v allocations, want at most 2", n)
	}
}

// defaultEnvLimits are decodeEnvelope's limits for the default
// rpcwire.Limits.
var defaultEnvLimits = envLimits(rpcwire.Limits{})

// smallLimits are limits small enough for FuzzEnvelope's bodies to reach.
var smallLimits = []rpcwire.Limits{
	{MaxDepth: 1}, {MaxDepth: 3}, {MaxDepth: 4}, {MaxDepth: 5}, {MaxDepth: 6},
	{MaxMembers: 1}, {MaxMembers: 2}, {MaxMembers: 3}, {MaxMembers: 5},
	{MaxNumberLength: 1}, {MaxNumberLength: 2}, {MaxNumberExponent: 1}, {MaxNumberExponent: 3},
	{MaxDepth: 5, MaxMembers: 4, MaxNumberLength: 3, MaxNumberExponent: 2},
}

// TestDecodeModernAllocs: the whole one-pass decoding of the usual
// tools/call, limits included, costs the envelope's two allocations (its
// limits stay on the stack).
func TestDecodeModernAllocs(t *testing.T) {
	body := []byte(envelopeSeeds[0].body)
	lim := rpcwire.Limits{MaxDepth: 32}
	n := testing.AllocsPerRun(100, func() {
		if _, e, ok := decodeModern(body, lim); !ok || e != nil {
			t.Fatal("not taken", e)
		}
	})
	if n > 2 {
		t.Errorf("decodeModern: %v allocations, want at most 2", n)
	}
}

// checkEnvelope compares decodeEnvelope with rpcwire.CheckLimits and the
// library decoder: it takes only a body within the limits, and every body
// within them that it takes with the defaults (so the limits are the only
// difference); what it takes, the library must decode to the same
// request, with the same envelope verdict.
func checkEnvelope(t *testing.T, data []byte) {
	t.Helper()
	fast, ok := decodeEnvelope(data, &defaultEnvLimits)
	if ok && rpcwire.CheckLimits(data, rpcwire.Limits{}) != nil {
		t.Fatalf("decodeEnvelope took a body over the default limits: %q", data)
	}
	for _, lim := range smallLimits {
		el := envLimits(lim)
		_, got := decodeEnvelope(data, &el)
		if want := ok && rpcwire.CheckLimits(data, lim) == nil; got != want {
			t.Fatalf("decodeEnvelope with %+v took it: %v; want %v (with the defaults: %v): %q", lim, got, want, ok, data)
		}
	}
	if !ok {
		return
	}
	slow, slowErr, slowOK := decodeModernLib(data)
	if !slowOK {
		t.Fatalf("decodeEnvelope took a body the library leaves to the general path: %q", data)
	}
	if !fast.id.Equal(slow.id) || fast.method != slow.method {
		t.Fatalf("id/method differ: %s %q vs %s %q: %q", fast.id, fast.method, slow.id, slow.method, data)
	}
	if !reflect.DeepEqual(fast.p, slow.p) {
		a, _ := json.Marshal(fast.p)
		b, _ := json.Marshal(slow.p)
		t.Fatalf("params differ:\n%s\n%s\nbody %q", a, b, data)
	}
	fastErr := readEnvelope(fast)
	if (fastErr == nil) != (slowErr == nil) || fastErr != nil && (fastErr.Code != slowErr.Code || fastErr.Message != slowErr.Message) {
		t.Fatalf("envelope verdicts differ: %v vs %v: %q", fastErr, slowErr, data)
	}
	if !reflect.DeepEqual(fast.meta, slow.meta) {
		t.Fatalf("meta differ: %+v vs %+v: %q", fast.meta, slow.meta, data)
	}
}

// FuzzEnvelope holds decodeEnvelope to the library decoder's result on
// every body it takes (seeds: envelopeSeeds and testdata/fuzz/FuzzEnvelope).
func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkEnvelope(t, data)
	})
}

// TestEnvelopeKnowsEveryField: decodeEnvelope reads the members of params,
// _meta, clientCapabilities and clientInfo by name. A field added to one
// of those structs must be added to it too (or made to give up on it),
// or it would silently ignore the new member.
func TestEnvelopeKnowsEveryField(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
	}{
		{paramsIn{}, "_meta argument arguments context cursor inputResponses name notifications ref requestState taskId uri"},
		{metaIn{}, "baggage io.modelcontextprotocol/clientCapabilities io.modelcontextprotocol/clientInfo io.modelcontextprotocol/logLevel io.modelcontextprotocol/protocolVersion progressToken traceparent tracestate"},
		{mcp.ClientCapabilities{}, "elicitation experimental extensions roots sampling"},
		{mcp.ElicitationCapability{}, "form url"},
		{mcp.SamplingCapability{}, "context tools"},
		{mcp.RootsCapability{}, "listChanged"},
		{mcp.Implementation{}, "description icons name title version websiteUrl"},
		{messageIn{}, "error id jsonrpc method params result"},
	} {
		var keys []string
		for _, f := range reflect.VisibleFields(reflect.TypeOf(tc.v)) {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			keys = append(keys, name)
		}
		sort.Strings(keys)
		if got := strings.Join(keys, " "); got != tc.want {
			t.Errorf("%T has the members %q; decodeEnvelope knows %q: teach it the new ones", tc.v, got, tc.want)
		}
	}
}

// TestEnvelopeMarksResponsesValid holds that only a request the envelope
// walk took (every value checked by jsonscan.SkipValueWithin) has its
// inputResponses parsed without json.Valid, and that the library path's
// are checked again.
func TestEnvelopeMarksResponsesValid(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm","arguments":{},"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	el := envLimits(rpcwire.Limits{})
	r, ok := decodeEnvelope(body, &el)
	if !ok || !r.responsesValid {
		t.Fatalf("decodeEnvelope: ok %v, responsesValid %v; want both", ok, r != nil && r.responsesValid)
	}
	r, _, ok = decodeModernLib(body)
	if !ok || r.responsesValid {
		t.Fatalf("decodeModernLib: ok %v, responsesValid %v; want ok and not valid", ok, r != nil && r.responsesValid)
	}
}
