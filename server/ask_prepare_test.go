package server

import (
	"fmt"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/elicit"
	"github.com/baton-mcp/baton/mcp"
	"github.com/baton-mcp/baton/mrtr"
)

// TestPrepareElicitIsPrepare holds prepareElicit, the replayed
// elicitation's checks, to prepare's on the stateless protocol: the same
// error (or none) and the same request to ask, for every kind of question
// and key and every set of declared capabilities.
func TestPrepareElicitIsPrepare(t *testing.T) {
	form, err := elicit.NewForm("Proceed?", elicit.Boolean("ok").Required())
	if err != nil {
		t.Fatal(err)
	}
	withID := *form
	withID.ElicitationID = "e1"
	url := &elicit.Request{Mode: elicit.ModeURL, Message: "Open it", URL: "https://example.com/x", ElicitationID: "e2"}
	badURL := &elicit.Request{Mode: elicit.ModeURL, Message: "Open it", URL: "ftp://example.com/x"}
	noMessage := &elicit.Request{Mode: elicit.ModeForm, RequestedSchema: form.RequestedSchema}
	badMode := &elicit.Request{Mode: "voice", Message: "Say it"}
	reqs := []*elicit.Request{form, &withID, url, badURL, noMessage, badMode}
	keys := []string{"", "q1", "baton:0", "baton:x", strings.Repeat("k", 129), "a\x01b", "é"}
	capsets := []mcp.ClientCapabilities{
		{},
		{Elicitation: &mcp.ElicitationCapability{}},
		{Elicitation: &mcp.ElicitationCapability{URL: &mcp.Empty{}}},
		{Elicitation: &mcp.ElicitationCapability{Form: &mcp.Empty{}, URL: &mcp.Empty{}}},
	}
	for ci, caps := range capsets {
		c := &Call{}
		c.Meta.ClientCapabilities = caps
		for ri, req := range reqs {
			for _, key := range keys {
				name := fmt.Sprintf("caps %d, request %d, key %q", ci, ri, key)
				want, werr := c.prepare(mrtr.ElicitRequest(req).Keyed(key), false)
				got, gerr := c.prepareElicit(req, key)
				if fmt.Sprint(werr) != fmt.Sprint(gerr) {
					t.Fatalf("%s: error %v, want %v", name, gerr, werr)
				}
				if werr != nil {
					continue
				}
				if w := want.Elicitation(); *got != *w || (w == req) != (got == req) {
					t.Fatalf("%s: asks %+v, want %+v", name, got, w)
				}
			}
		}
	}
}
