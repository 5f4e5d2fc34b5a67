package round

import (
	"testing"

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
