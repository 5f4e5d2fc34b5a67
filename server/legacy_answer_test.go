package server

import (
	"bytes"
	"testing"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
)

// legacyAnswerSeeds are bodies POSTed in a legacy session that
// decodeLegacy must take as an answer (takes) or leave to the general path:
// FuzzLegacyAnswer starts from them (and from testdata/fuzz), and
// TestLegacyAnswerTakesTheUsualAnswers checks which is which.
var legacyAnswerSeeds = []struct {
	body  string
	takes bool
}{
	{`{"jsonrpc":"2.0","id":"b.AAAAAAAAAAAAAAAA","result":{"action":"accept","content":{"confirm":true}}}`, true},
	{`{"jsonrpc":"2.0","id":7,"result":{"action":"decline"}}`, true},
	{` { "result" : { "action" : "cancel" } , "id" : -3 , "jsonrpc" : "2.0" } `, true},
	{`{"jsonrpc":"2.0","id":"é","result":{"action":"accept","content":{"a":[1,2.5e3,"x\u0041"],"b":null}}}`, true},
	{`{"jsonrpc":"2.0","id":8,"result":{}}`, true},
	{`{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"no"}}`, false},
	{`{"jsonrpc":"2.0","id":10,"result":null}`, false},
	{`{"jsonrpc":"2.0","id":11,"result":[1]}`, false},
	{`{"jsonrpc":"2.0","id":12,"result":"x"}`, false},
	{`{"jsonrpc":"2.0","id":13,"result":{},"error":{"code":1,"message":"m"}}`, false},
	{`{"jsonrpc":"2.0","id":14,"result":{},"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":15,"id":16,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":null,"result":{}}`, false},
	{`{"jsonrpc":"2.0","result":{}}`, false},
	{`{"jsonrpc":"2.0","id":17,"result":{},"extra":1}`, false},
	{`{"jsonrpc":"2.0","id":18,"method":"tools/list","result":{}}`, false},
	{`{"jsonrpc":"2.0","id":19,"result":{},"params":{}}`, false},
	{`{"jsonrpc":"1.0","id":20,"result":{}}`, false},
	{`{"jsonrpc":"2\u002e0","id":21,"result":{}}`, false},
	{`{"\u006aspnrpc":"2.0","id":22,"result":{}}`, false},
	{`{"id":23,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":24,"result":{}} x`, false},
	{`{"jsonrpc":"2.0","id":25,"result":{"a":}}`, false},
	{`[{"jsonrpc":"2.0","id":26,"result":{}}]`, false},
	{`{"jsonrpc":"2.0","id":true,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":1.5,"result":{}}`, false},
	{`{"jsonrpc":"2.0","id":27,"method":"tools/call","params":{"name":"echo"}}`, false},
	{`{"jsonrpc":"2.0","id":28,"result":{"a":{"b":{"c":{"d":{"e":{}}}}}}}`, true},
	{`{"jsonrpc":"2.0","id":29,"result":{"n":1e999999}}`, false},
	{``, false},
	{`{`, false},
}

func TestLegacyAnswerTakesTheUsualAnswers(t *testing.T) {
	defLim := envLimits(rpcwire.Limits{})
	for _, s := range legacyAnswerSeeds {
		_, ok := legacyAnswerOf(t, []byte(s.body), &defLim)
		if ok != s.takes {
			t.Errorf("decodeLegacy took it as an answer: %v, want %v: %s", ok, s.takes, s.body)
		}
		checkLegacyAnswer(t, []byte(s.body))
	}
}

// TestLegacyAnswerAllocs: an answer is decoded in two allocations, the
// message and its id (decoded once).
func TestLegacyAnswerAllocs(t *testing.T) {
	body := []byte(legacyAnswerSeeds[0].body)
	defLim := envLimits(rpcwire.Limits{})
	n := testing.AllocsPerRun(100, func() {
		if _, ans, _ := decodeLegacy(body, &defLim); ans == nil {
			t.Fatal("not taken")
		}
	})
	if n > 2 {
		t.Errorf("decodeLegacy of an answer: %v allocations, want at most 2", n)
	}
}

// legacyAnswerOf is decodeLegacy's answer for body, having checked that
// decodeLegacy reports ok exactly when it returns a request or an answer,
// never both.
func legacyAnswerOf(t *testing.T, body []byte, lim *jsonscan.Limits) (*rpcwire.Message, bool) {
	t.Helper()
	e, ans, ok := decodeLegacy(body, lim)
	if ok != (e != nil || ans != nil) || e != nil && ans != nil {
		t.Fatalf("decodeLegacy: ok %v with request %v and answer %v: %q", ok, e != nil, ans != nil, body)
	}
	return ans, ans != nil
}

// checkLegacyAnswer compares decodeLegacy's answers with the general path:
// what it takes is within the limits (the server's and, under small
// limits, those), and rpcwire.Decode decodes it without error to the
// same response.
func checkLegacyAnswer(t *testing.T, data []byte) {
	t.Helper()
	defLim := envLimits(rpcwire.Limits{})
	fast, ok := legacyAnswerOf(t, data, &defLim)
	if !ok {
		return
	}
	if err := rpcwire.CheckLimits(data, rpcwire.Limits{}); err != nil {
		t.Fatalf("decodeLegacy took an answer a body over the limits (%v): %q", err, data)
	}
	small := rpcwire.Limits{MaxDepth: 3, MaxMembers: 4, MaxNumberLength: 8, MaxNumberExponent: 3}
	smallLim := envLimits(small)
	if _, took := legacyAnswerOf(t, data, &smallLim); took && rpcwire.CheckLimits(data, small) != nil {
		t.Fatalf("decodeLegacy took an answer a body over small limits: %q", data)
	}
	msg, derr := rpcwire.Decode(data, rpcwire.Limits{})
	if derr != nil {
		t.Fatalf("decodeLegacy took an answer a body rpcwire.Decode refuses (%v): %q", derr, data)
	}
	if !msg.IsResponse() || msg.IsRequest() || msg.IsNotification() {
		t.Fatalf("decodeLegacy took an answer a body that is not a response: %q", data)
	}
	if fast.JSONRPC != msg.JSONRPC || !fast.ID.Equal(msg.ID) || fast.ID.String() != msg.ID.String() || fast.Method != msg.Method ||
		fast.Params != nil || !bytes.Equal(fast.Result, msg.Result) || fast.Error != nil || msg.Error != nil || !fast.IsResponse() {
		t.Fatalf("messages differ:\n%+v\n%+v\nbody %q", *fast, *msg, data)
	}
}

// FuzzLegacyAnswer holds decodeLegacy's answers to the general path's result
// on every body it takes.
func FuzzLegacyAnswer(f *testing.F) {
	for _, s := range legacyAnswerSeeds {
		f.Add([]byte(s.body))
	}
	for _, s := range legacyEnvelopeSeeds {
		f.Add([]byte(s.body))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkLegacyAnswer(t, data)
	})
}
