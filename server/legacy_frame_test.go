package server

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// TestLegacyFrame checks that a legacy tools/call's result is written
// inside its whole response, byte for byte what the session would frame
// around it, and that the response is handed over only with that very
// result.
func TestLegacyFrame(t *testing.T) {
	s, err := New(mcp.Implementation{Name: "t", Version: "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{`7`, `"req-1"`, `-12`, `"` + string(bytes.Repeat([]byte("x"), 300)) + `"`} {
		var id mcp.ID
		if err := id.UnmarshalJSON([]byte(raw)); err != nil {
			t.Fatal(err)
		}
		for _, res := range []*ToolResult{TextResult("hello"), ErrorResult("no \"such\" thing\n"), {StructuredContent: map[string]int{"n": 1}}, {}} {
			r := &request{id: id, method: "tools/call", legacy: true}
			out, e := s.encodeToolResult(r, res, nil)
			if e != nil {
				t.Fatal(e)
			}
			want := rpcwire.AppendResult(nil, id, out)
			if got := legacyFrame(r, out); !bytes.Equal(got, want) {
				t.Fatalf("id %s: frame %s, want %s", raw, got, want)
			}
			if !json.Valid(out) || !json.Valid(r.frame) {
				t.Fatalf("id %s: invalid JSON: %s / %s", raw, out, r.frame)
			}
			// Appending to the result must not touch the frame.
			_ = append(out, 'x')
			if got := legacyFrame(r, out); !bytes.Equal(got, want) {
				t.Fatalf("id %s: appending to the result changed the frame: %s", raw, got)
			}
			// Another result (middleware's) gets no frame.
			for _, other := range []json.RawMessage{out[1:], out[:len(out)-1], append(json.RawMessage(nil), out...), nil} {
				if got := legacyFrame(r, other); got != nil {
					t.Fatalf("id %s: frame %s for result %s", raw, got, other)
				}
			}
		}
	}
	// A modern request has none.
	r := &request{id: mcp.ID{}, method: "tools/call"}
	out, _ := s.encodeToolResult(r, TextResult("hi"), nil)
	if r.frame != nil || legacyFrame(r, out) != nil {
		t.Fatalf("modern request got a frame: %s", r.frame)
	}
}
