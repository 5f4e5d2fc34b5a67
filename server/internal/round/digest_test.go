package round

import (
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
	"github.com/baton-mcp/baton/server/internal/seal"
)

func TestDigestDistinguishesRequests(t *testing.T) {
	a, _ := Digest(mrtr.ElicitRequest(confirmForm(t, "a")))
	b, _ := Digest(mrtr.ElicitRequest(confirmForm(t, "b")))
	r, _ := Digest(mrtr.RootsRequest())
	s1, _ := Digest(mrtr.SampleRequest(&mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("x")}, MaxTokens: 5}))
	s2, _ := Digest(mrtr.SampleRequest(&mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{mcp.UserText("x")}, MaxTokens: 6}))
	seen := map[seal.Digest]bool{}
	for _, d := range []seal.Digest{a, b, r, s1, s2} {
		if seen[d] {
			t.Fatal("two different requests share a digest")
		}
		seen[d] = true
	}
}

// TestDigestOfElicitation: an elicitation's digest is elicitDigest of its
// elicit.Request digest, whichever way digestOf reaches it (an
// elicit.Request, or an elicitation without one), with and without the
// server's table.
func TestDigestOfElicitation(t *testing.T) {
	form := confirmForm(t, "a")
	var table Digests
	for _, req := range []*elicit.Request{form, nil} {
		want := elicitDigest(req.Digest())
		for _, tab := range []*Digests{nil, &table, &table} {
			if got, err := digestOf(mrtr.ElicitRequest(req), tab); err != nil || got != want {
				t.Fatalf("request %v: digest %x, %v; want %x", req != nil, got, err, want)
			}
		}
	}
}
