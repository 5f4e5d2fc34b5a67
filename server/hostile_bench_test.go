package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcptest"
)

// hostileBody is one request body of BenchmarkHostile: arguments and
// inputResponses as raw JSON.
type hostileBody struct {
	name      string
	args      string
	responses string // "" for none
}

// hostileBodies are the bodies of issue 9 and their kin, each beside a
// benign body of about its size (a plain string of that length). Every
// benchmark reports its size (MB/s), so a hostile body compares with the
// benign one directly.
func hostileBodies() []hostileBody {
	str := func(n int) string { return `{"text":"` + strings.Repeat("a", n) + `"}` }
	keys := func(n int, val string) string {
		var b strings.Builder
		b.WriteByte('{')
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":%s`, i, val)
		}
		b.WriteByte('}')
		return b.String()
	}
	nested := func(width, depth int) string {
		v := "1"
		for range depth {
			v = keys(width, v)
		}
		return v
	}
	deep := func(n, depth int) string {
		one := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		return `{"deep":[` + strings.Repeat(one+",", n-1) + one + `]}`
	}
	return []hostileBody{
		{name: "benign-500B", args: keys(20, `12345678`)},
		{name: "exp-big-20", args: keys(20, `1e999999`)},
		{name: "exp-small-20", args: keys(20, `1e-999999`)},
		{name: "benign-100KB", args: str(100 << 10)},
		{name: "long-numbers-20x5000", args: keys(20, strings.Repeat("7", 5000))},
		{name: "benign-430KB", args: str(430 << 10)},
		{name: "benign-430KB-ints", args: `{"list":[` + strings.Repeat("1234567,", 430<<10/8) + `0]}`},
		{name: "args-40000-keys", args: keys(40000, `1`)},
		{name: "args-200x200-keys", args: nested(200, 2)},
		{name: "args-deep-55x4000", args: deep(4000, 55)},
		{name: "args-escapes-430KB", args: `{"text":"` + strings.Repeat(`\u00e9`, 430<<10/6) + `"}`},
		{name: "benign-1.6MB", args: str(1600 << 10)},
		{name: "responses-40000-keys", args: `{}`, responses: keys(40000, `{"action":"accept","content":{"ok":true}}`)},
	}
}

// BenchmarkHostile serves the bodies of hostileBodies through ServeHTTP to
// a tool that asks one question, with three kinds of requestState:
// garbage (a token-shaped string whose signature does not verify), signed
// (a genuine token issued for other arguments of the same tool) and none
// (a first call: the arguments are validated and the handler runs). A
// hostile body should cost about what the benign body of its size costs.
func BenchmarkHostile(b *testing.B) {
	s := newTestServer(b, nil)
	form := confirmForm(b, "Proceed?")
	mustAddTool(b, s, Tool{Name: "confirm", InputSchema: json.RawMessage(
		`{"type":"object","additionalProperties":{"type":["integer","string","array","object"]}}`)},
		func(ctx context.Context, req *ToolRequest) (*ToolResult, error) {
			if _, err := req.Elicit(ctx, form, WithKey("ok")); err != nil {
				return nil, err
			}
			return TextResult("done"), nil
		})
	// A genuine state for the arguments {}.
	round1 := wantInputRequired(b, sendTool(b, newClient(b, s, elicitCaps), "confirm", map[string]any{}), "ok")
	enc := base64.RawURLEncoding.EncodeToString
	states := []struct{ name, token string }{
		{"garbage", enc([]byte(`{"alg":"HS256","kid":"k1","typ":"JWT"}`)) + "." + enc(bytes.Repeat([]byte("x"), 300)) + "." + enc(bytes.Repeat([]byte("y"), 32))},
		{"signed", round1.RequestState},
		{"none", ""},
	}

	for _, hb := range hostileBodies() {
		for _, st := range states {
			var responses any
			if hb.responses != "" {
				responses = json.RawMessage(hb.responses)
			}
			// The hostile part is the arguments or the answers; mcptest
			// wraps them in the envelope once, and the loop replays it.
			req := wireOf(b, s, elicitCaps, func(c *mcptest.Client) {
				sendTool(b, c, "confirm", json.RawMessage(hb.args), mcptest.Resume(st.token, responses))
			})
			b.Run(hb.name+"/"+st.name, func(b *testing.B) {
				b.SetBytes(int64(len(req.body)))
				b.ReportAllocs()
				for b.Loop() {
					rec := req.serve(s, nil)
					if rec.Code == http.StatusInternalServerError {
						b.Fatalf("status %d: %.300s", rec.Code, rec.Body)
					}
				}
			})
		}
	}
}
