package server_test

import (
	"encoding/json"
	"testing"

	"github.com/baton-mcp/baton/server"
)

// The helpers send what their hand-built equivalents send.
func TestResultHelpersOnTheWire(t *testing.T) {
	p, err := json.Marshal(server.UserPrompt("Pack for rain").Messages)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"role":"user","content":{"type":"text","text":"Pack for rain"}}]`; string(p) != want {
		t.Errorf("UserPrompt's messages = %s, want %s", p, want)
	}
	r, err := json.Marshal(server.TextResource("trips://cities", "text/plain", "Kyoto").Contents)
	if err != nil {
		t.Fatal(err)
	}
	if want := `[{"uri":"trips://cities","mimeType":"text/plain","text":"Kyoto"}]`; string(r) != want {
		t.Errorf("TextResource's contents = %s, want %s", r, want)
	}
}
