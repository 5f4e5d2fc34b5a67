package server

import (
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/internal/loglevel"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// FuzzDecodeRequest runs the envelope parser on arbitrary input: it must
// never panic, and whatever it accepts must satisfy the envelope rules.
func FuzzDecodeRequest(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"progressToken":7,"io.modelcontextprotocol/logLevel":"info"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"progressToken":1.5}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"server/discover"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkOnePass(t, data)
		lim := rpcwire.Limits{MaxDepth: 64}
		msg, derr := rpcwire.Decode(data, lim)
		if derr != nil {
			// A limit's error is the pre-scan's, whatever follows it.
			if lerr := rpcwire.CheckLimits(data, lim); lerr != nil {
				if derr.Code != lerr.Code || derr.Message != lerr.Message {
					t.Fatalf("Decode error %d %q, want the limit's %d %q", derr.Code, derr.Message, lerr.Code, lerr.Message)
				}
				return
			}
			if derr.Code != mcp.ParseError && derr.Code != mcp.InvalidRequest {
				t.Fatalf("Decode error code %d: %s", derr.Code, derr.Message)
			}
			return
		}
		if !msg.IsRequest() {
			return
		}
		r, e := decodeRequest(msg)
		if r == nil {
			t.Fatal("decodeRequest returned no request")
		}
		if !r.id.Equal(msg.ID) || r.method != msg.Method {
			t.Fatalf("id/method not kept: %s %q", r.id, r.method)
		}
		if e != nil {
			if e.Code != mcp.InvalidParams {
				t.Fatalf("decodeRequest error code %d: %s", e.Code, e.Message)
			}
			if _, err := rpcwire.AppendError(nil, msg.ID, e); err != nil {
				t.Fatalf("error does not encode: %v", err)
			}
			return
		}
		if r.meta.ProtocolVersion == "" {
			t.Fatal("accepted a request without a protocol version")
		}
		if r.meta.LogLevel != "" && !loglevel.Valid(r.meta.LogLevel) {
			t.Fatalf("accepted log level %q", r.meta.LogLevel)
		}
		if tok := r.meta.ProgressToken; tok != nil {
			var id mcp.ID
			if err := id.UnmarshalJSON(tok); err != nil {
				t.Fatalf("accepted progress token %s", tok)
			}
		}
		if r.p.Meta == nil || r.p.Meta.ClientCapabilities == nil {
			t.Fatal("accepted a request without client capabilities")
		}
		if _, err := json.Marshal(r.meta.ClientCapabilities); err != nil {
			t.Fatalf("capabilities do not re-encode: %v", err)
		}
		_, _ = mcpName(r)
		_ = hasModernMeta(msg.Params)
	})
}

// checkOnePass compares the one-pass decoder with the general path: when
// decodeModern takes a body, the general path must read the same request
// and reach the same envelope verdict.
func checkOnePass(t *testing.T, data []byte) {
	fast, fastErr, ok := decodeModern(data, rpcwire.Limits{MaxDepth: 64})
	if !ok {
		return
	}
	msg, derr := rpcwire.Decode(data, rpcwire.Limits{MaxDepth: 64})
	if derr != nil {
		t.Fatalf("decodeModern took a body the general path refuses (%d %s): %s", derr.Code, derr.Message, data)
	}
	slow, slowErr := decodeRequest(msg)
	if !fast.id.Equal(slow.id) || fast.method != slow.method {
		t.Fatalf("id/method differ: %s %q vs %s %q", fast.id, fast.method, slow.id, slow.method)
	}
	if (fastErr == nil) != (slowErr == nil) || (fastErr != nil && fastErr.Message != slowErr.Message) {
		t.Fatalf("envelope verdicts differ: %v vs %v", fastErr, slowErr)
	}
	if fastErr == nil {
		a, _ := json.Marshal(fast.meta)
		b, _ := json.Marshal(slow.meta)
		if string(a) != string(b) {
			t.Fatalf("envelopes differ: %s vs %s", a, b)
		}
	}
}
