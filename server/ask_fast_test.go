package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcptest"
)

// TestAnswerCheckedEitherWay sends answers that elicit's one-pass check
// passes and answers that only the full check decides through a whole
// flow: each accepted answer completes the call with its value, and each
// refused one is refused as the full check words it, with HTTP 400 and
// -32602.
func TestAnswerCheckedEitherWay(t *testing.T) {
	f := newMRTRFixture(t)
	c := newClient(t, f.s, elicitCaps)
	r1 := wantInputRequired(t, sendTransfer(t, c, nil), "confirm")
	form := confirmForm(t, "Confirm the transfer?")
	answer := func(raw string) *mcptest.Response {
		return sendTransfer(t, c, nil, mcptest.Resume(r1.RequestState, map[string]any{"confirm": json.RawMessage(raw)}))
	}
	for _, tt := range []struct {
		name, answer, want string
	}{
		{"plain", `{"action":"accept","content":{"ok":true}}`, "sent 10 to bob: true"},
		{"members reordered", `{"content":{"ok":false},"action":"accept"}`, "sent 10 to bob: false"},
		{"with _meta", `{"action":"accept","content":{"ok":true},"_meta":{"k":1}}`, "sent 10 to bob: true"},
		{"with an undefined property", `{"action":"accept","content":{"ok":true,"note":"x"}}`, "sent 10 to bob: true"},
		{"escaped action", `{"action":"\u0061ccept","content":{"ok":true}}`, "sent 10 to bob: true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if text, isErr := toolText(t, completeResult(t, answer(tt.answer))); text != tt.want || isErr {
				t.Errorf("result %q isError=%v, want %q", text, isErr, tt.want)
			}
		})
	}
	for _, tt := range []struct{ name, answer string }{
		{"wrong type", `{"action":"accept","content":{"ok":"yes"}}`},
		{"duplicate property", `{"action":"accept","content":{"ok":true,"ok":false}}`},
		{"required missing", `{"action":"accept","content":{}}`},
		{"null value", `{"action":"accept","content":{"ok":null}}`},
		{"content on decline", `{"action":"decline","content":{"ok":true}}`},
		{"duplicate action", `{"action":"accept","action":"decline","content":{"ok":true}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, cerr := form.CheckResult([]byte(tt.answer))
			if cerr == nil {
				t.Fatal("elicit accepts the answer")
			}
			e := wantError(t, answer(tt.answer), http.StatusBadRequest, -32602)
			if !strings.Contains(e.Message, `input response "confirm"`) || !strings.Contains(e.Message, cerr.Error()) {
				t.Errorf("message %q, want the answer's key and %q", e.Message, cerr.Error())
			}
		})
	}
}
