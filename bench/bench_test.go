package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestServers checks that every server answers both scenarios as the load
// generator expects, and that Baton and the go-sdk server really verify
// the state and validate the answer (the floor does neither, by design).
func TestServers(t *testing.T) {
	urls, _, err := startServers()
	if err != nil {
		t.Fatal(err)
	}
	tr := newTransport(1)
	for _, name := range serverNames {
		t.Run(name, func(t *testing.T) {
			c := newClient(tr, urls[name])
			if err := c.echoOp(); err != nil {
				t.Fatalf("echo: %v", err)
			}
			if err := c.confirmOp(); err != nil {
				t.Fatalf("confirm: %v", err)
			}
			if name == "floor" {
				return
			}
			r, err := c.post("confirm", c.body("confirm", `"arguments":{"id":42},`))
			if err != nil {
				t.Fatal(err)
			}
			state := r.Result.RequestState
			retry := func(id int, stateJSON, answer string) string {
				t.Helper()
				body := c.body("confirm", `"arguments":{"id":`+itoa(id)+`},"inputResponses":{"confirm":`+answer+`},"requestState":`+stateJSON+`,`)
				req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(body)))
				req.Header = c.header["confirm"]
				res, err := c.http.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				c.buf.Reset()
				c.buf.ReadFrom(res.Body)
				return c.buf.String()
			}
			good := `{"action":"accept","content":{"confirm":true}}`
			q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
			if out := retry(42, q(state), good); !strings.Contains(out, `"text":"confirmed"`) {
				t.Fatalf("good retry: %s", out)
			}
			tampered := state[:len(state)-2] + flip(state[len(state)-2]) + state[len(state)-1:]
			for what, out := range map[string]string{
				"tampered state": retry(42, q(tampered), good),
				"other args":     retry(43, q(state), good),
				"forged state":   retry(42, q("eyJhbGciOiJub25lIn0.e30."), good),
				"wrong type":     retry(42, q(state), `{"action":"accept","content":{"confirm":"yes"}}`),
				"missing field":  retry(42, q(state), `{"action":"accept","content":{}}`),
			} {
				if strings.Contains(out, `"text":"confirmed"`) {
					t.Errorf("%s accepted: %s", what, out)
				} else {
					t.Logf("%s refused: %.200s", what, out)
				}
			}
		})
	}
}

func flip(c byte) string {
	if c == 'A' {
		return "B"
	}
	return "A"
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }
