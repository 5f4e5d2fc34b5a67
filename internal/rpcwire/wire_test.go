package rpcwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"strings"
	"testing"

	"github.com/baton-mcp/baton/mcp"
)

func TestDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		code     int    // 0: accepted
		msg      string // substring of the error message
		kind     string // request, notification, response
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, 0, "", "request"},
		{"string id", `{"jsonrpc":"2.0","id":"a","method":"x"}`, 0, "", "request"},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 0, "", "notification"},
		{"response", `{"jsonrpc":"2.0","id":1,"result":{}}`, 0, "", "response"},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`, 0, "", "response"},
		{"null params", `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, 0, "", "request"},
		{"empty", ``, mcp.ParseError, "empty body", ""},
		{"garbage", `{"jsonrpc":`, mcp.ParseError, "invalid JSON", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, mcp.InvalidRequest, "batched", ""},
		{"scalar", `42`, mcp.InvalidRequest, "JSON object", ""},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"x"}`, mcp.InvalidRequest, `"2.0"`, ""},
		{"no method", `{"jsonrpc":"2.0","id":1}`, mcp.InvalidRequest, "neither", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, mcp.InvalidRequest, "string or an integer", ""},
		{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, mcp.InvalidRequest, "string or an integer", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"x"}`, mcp.InvalidRequest, "string or an integer", ""},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, mcp.InvalidRequest, `"params" must be a JSON object`, ""},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, mcp.InvalidRequest, "cannot carry", ""},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, mcp.ParseError, "nesting exceeds the limit of 64", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Decode([]byte(tc.in), Limits{})
			if tc.code != 0 {
				if err == nil || err.Code != tc.code || !strings.Contains(err.Message, tc.msg) {
					t.Fatalf("err = %+v, want code %d with %q", err, tc.code, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := map[bool]string{m.IsRequest(): "request", m.IsNotification(): "notification", m.IsResponse(): "response"}[true]
			if got != tc.kind {
				t.Fatalf("kind = %q, want %q", got, tc.kind)
			}
		})
	}
}

func TestDecodeKeepsIDForErrors(t *testing.T) {
	m, err := Decode([]byte(`{"jsonrpc":"2.0","id":7,"method":"x","params":"no"}`), Limits{})
	if err == nil || m == nil || m.ID.String() != "7" {
		t.Fatalf("m = %+v, err = %v: the id must survive for the error response", m, err)
	}
}

func TestCheckLimits(t *testing.T) {
	deep := strings.Repeat("[", 10) + strings.Repeat("]", 10)
	members := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d":{"a":1,"b":2}`, i)
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	for _, tc := range []struct {
		name string
		in   string
		lim  Limits
		code int    // 0: within the limits
		msg  string // part of the message
	}{
		{"depth at the limit", deep, Limits{MaxDepth: 10}, 0, ""},
		{"depth over the limit", deep, Limits{MaxDepth: 9}, mcp.ParseError, "limit of 9 levels"},
		{"depth default", strings.Repeat("[", 65) + strings.Repeat("]", 65), Limits{}, mcp.ParseError, "limit of 64 levels"},
		// Brackets and colons inside strings, escaped quotes included, do not count.
		{"brackets in strings", `{"a":"[[[[[[[[[[\"[[[[[[[[[["}`, Limits{MaxDepth: 1}, 0, ""},
		{"escaped backslash ends a string", `{"a":"\\","b":[[1]]}`, Limits{MaxDepth: 2}, mcp.ParseError, "limit of 2 levels"},
		{"colons in strings", `{"a:b:c":"d:e:f"}`, Limits{MaxMembers: 1}, 0, ""},
		{"members at the limit", members(3), Limits{MaxMembers: 3}, 0, ""},
		{"members over the limit", members(4), Limits{MaxMembers: 3}, mcp.InvalidParams, "more than 3 members"},
		{"members counted per object", `{"a":{"x":1,"y":2},"b":{"x":1,"y":2},"c":[{"x":1,"y":2}]}`, Limits{MaxMembers: 3}, 0, ""},
		{"array elements are not members", `[1,2,3,4,5,6]`, Limits{MaxMembers: 1}, 0, ""},
		{"members default", members(10001), Limits{}, mcp.InvalidParams, "more than 10000 members"},
		{"number at the length limit", `{"n":-1234.5e+6}`, Limits{MaxNumberLength: 10}, 0, ""},
		{"number over the length limit", `{"n":-1234.5e+67}`, Limits{MaxNumberLength: 10}, mcp.InvalidParams, "11 bytes long, over the limit of 10"},
		{"long number in a string", `{"n":"` + strings.Repeat("9", 200) + `"}`, Limits{}, 0, ""},
		{"long number default", `[` + strings.Repeat("9", 101) + `]`, Limits{}, mcp.InvalidParams, "limit of 100"},
		{"exponent at the limit", `[1e400,1E-400,1e+0400]`, Limits{}, 0, ""},
		{"exponent over the limit", `[1e401]`, Limits{}, mcp.InvalidParams, "beyond ±400"},
		{"negative exponent over the limit", `{"a":1e-999999}`, Limits{}, mcp.InvalidParams, "beyond ±400"},
		{"huge exponent", `[1e99999999999999999999999999]`, Limits{MaxNumberLength: 1000}, mcp.InvalidParams, "beyond ±400"},
		{"exponent set", `[1e50]`, Limits{MaxNumberExponent: 49}, mcp.InvalidParams, "beyond ±49"},
		{"words are not numbers", `[true,false,null]`, Limits{MaxNumberLength: 1}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := CheckLimits([]byte(tc.in), tc.lim)
			switch {
			case tc.code == 0 && e != nil:
				t.Fatalf("refused: %v", e)
			case tc.code != 0 && e == nil:
				t.Fatal("accepted")
			case tc.code != 0 && (e.Code != tc.code || !strings.Contains(e.Message, tc.msg)):
				t.Fatalf("got %d %q, want %d with %q", e.Code, e.Message, tc.code, tc.msg)
			}
			if tc.code == 0 {
				return
			}
			// Decode reports the same error.
			if _, de := Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":`+tc.in+`}}`), tc.lim); de == nil || de.Code != tc.code {
				t.Fatalf("Decode: %v, want code %d", de, tc.code)
			}
		})
	}
}

// FuzzCheckLimits compares CheckLimits with limits measured from
// encoding/json's token stream: on valid JSON it refuses exactly the
// inputs that exceed a limit. On any input it must not panic.
func FuzzCheckLimits(f *testing.F) {
	lim := Limits{MaxDepth: 4, MaxMembers: 3, MaxNumberLength: 8, MaxNumberExponent: 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := CheckLimits(data, lim)
		if !json.Valid(data) {
			return
		}
		over := exceeds(t, data, lim)
		if (e != nil) != (over != "") {
			t.Fatalf("CheckLimits = %v, but measured: %q\n%s", e, over, data)
		}
	})
}

// exceeds says which limit valid JSON data exceeds, measured with
// encoding/json's tokens, or "".
func exceeds(t *testing.T, data []byte, lim Limits) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type level struct {
		object bool
		tokens int
	}
	var open []level
	over := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return over
		}
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			open = open[:len(open)-1]
			continue
		}
		if n := len(open); n > 0 {
			open[n-1].tokens++
			if open[n-1].object && open[n-1].tokens%2 == 1 && (open[n-1].tokens+1)/2 > lim.MaxMembers {
				over = "members"
			}
		}
		switch v := tok.(type) {
		case json.Delim:
			open = append(open, level{object: v == '{'})
			if len(open) > lim.MaxDepth {
				over = "depth"
			}
		case json.Number:
			if len(v) > lim.MaxNumberLength {
				over = "length"
			}
			if i := strings.IndexAny(string(v), "eE"); i >= 0 {
				exp, _ := new(big.Int).SetString(strings.TrimLeft(string(v[i+1:]), "+-"), 10)
				if exp.Cmp(big.NewInt(int64(lim.MaxNumberExponent))) > 0 {
					over = "exponent"
				}
			}
		}
	}
}

func TestHTTPStatus(t *testing.T) {
	for code, want := range map[int]int{
		mcp.MethodNotFound: 404, mcp.InvalidParams: 400, mcp.InvalidRequest: 400, mcp.ParseError: 400,
		mcp.HeaderMismatch: 400, mcp.MissingRequiredClientCapability: 400, mcp.UnsupportedProtocolVersion: 400,
		mcp.InternalError: 200, -1: 200,
	} {
		if got := HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

func TestEncode(t *testing.T) {
	if got := string(AppendResult(nil, mcp.IntID(3), []byte(`{"a":1}`))); got != `{"jsonrpc":"2.0","id":3,"result":{"a":1}}` {
		t.Fatal(got)
	}
	got, err := AppendError(nil, mcp.StringID("x"), &mcp.Error{Code: mcp.InvalidParams, Message: "bad", Data: map[string]string{"uri": "u"}})
	if err != nil || string(got) != `{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad","data":{"uri":"u"}}}` {
		t.Fatal(string(got), err)
	}
	got, _ = AppendError(nil, mcp.ID{}, &mcp.Error{Code: mcp.ParseError, Message: "p"})
	if string(got) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}` {
		t.Fatal(string(got))
	}
	// Unencodable data keeps code and message.
	got, err = AppendError(nil, mcp.IntID(1), &mcp.Error{Code: mcp.InternalError, Message: "m", Data: make(chan int)})
	if err == nil || !json.Valid(got) || !strings.Contains(string(got), `"message":"m"`) {
		t.Fatalf("%s, %v", got, err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, Limits{MaxDepth: 16})
		if err == nil {
			if m.JSONRPC != Version || (m.Method == "" && !m.IsResponse()) {
				t.Fatalf("accepted an invalid message: %+v", m)
			}
			if len(m.Params) > 0 && m.Params[0] != '{' {
				t.Fatalf("accepted params %s", m.Params)
			}
		}
	})
}
