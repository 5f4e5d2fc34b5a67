package legacy

import (
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
)

// FuzzParseQuestionID: an answer's id is the client's; whatever it is,
// parseQuestionID either refuses it or returns the parts questionID
// joined, and never panics.
func FuzzParseQuestionID(f *testing.F) {
	_, k := questionID(callKey("s", mcp.StringID("c1")), randomID(""))
	f.Add(`"` + k + `"`)
	f.Add(`"AAAAAAAAAAAAAAAA:BBBBBBBBBBBBBBBB.1"`)
	f.Add(`"AAAAAAAAAAAAAAAA.1"`)
	f.Add(`7`)
	f.Add(`"AAAAAAAAAAAAAAAA:BBBBBBBBBBBBBBBB.-1"`)
	f.Fuzz(func(t *testing.T, raw string) {
		var id mcp.ID
		if id.UnmarshalJSON([]byte(raw)) != nil {
			return
		}
		key, call, inst, ok := parseQuestionID(id)
		if !ok {
			return
		}
		if !strings.HasPrefix(key, call+":"+inst+".") || len(call) != instanceIDLen || len(inst) != instanceIDLen {
			t.Fatalf("%s: parts %q %q %q", raw, key, call, inst)
		}
	})
}

// A question's id parses back into its parts; an id of the older forms
// does not.
func TestQuestionID(t *testing.T) {
	call, inst := callKey("sid", mcp.IntID(3)), randomID("")
	id, key := questionID(call, inst)
	k, c, i, ok := parseQuestionID(id)
	if !ok || k != key || c != call || i != inst {
		t.Fatalf("parse(%s) = %q %q %q %v", id.Raw(), k, c, i, ok)
	}
	for _, old := range []mcp.ID{mcp.IntID(1), mcp.StringID(inst + ".12")} {
		if _, _, _, ok := parseQuestionID(old); ok {
			t.Errorf("parse(%s) took an id of the older form", old.Raw())
		}
	}
	if callKey("sid", mcp.IntID(3)) != call || callKey("sid", mcp.StringID("3")) == call {
		t.Error("callKey is not a function of the session and the id's JSON text")
	}
}
