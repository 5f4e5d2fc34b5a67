package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
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
		{"empty", ``, ParseError, "empty body", ""},
		{"garbage", `{"jsonrpc":`, ParseError, "invalid JSON", ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"x"}]`, InvalidRequest, "batched", ""},
		{"scalar", `42`, InvalidRequest, "JSON object", ""},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"x"}`, InvalidRequest, `"2.0"`, ""},
		{"no method", `{"jsonrpc":"2.0","id":1}`, InvalidRequest, "neither", ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"x"}`, InvalidRequest, "string or an integer", ""},
		{"fraction id", `{"jsonrpc":"2.0","id":1.5,"method":"x"}`, InvalidRequest, "string or an integer", ""},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"x"}`, InvalidRequest, "string or an integer", ""},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, InvalidRequest, `"params" must be a JSON object`, ""},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, InvalidRequest, "cannot carry", ""},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, ParseError, "nesting exceeds the limit of 64", ""},
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

func TestCheckDepth(t *testing.T) {
	deep := strings.Repeat("[", 10) + strings.Repeat("]", 10)
	if err := CheckDepth([]byte(deep), 10); err != nil {
		t.Fatalf("depth 10 at limit 10: %v", err)
	}
	if err := CheckDepth([]byte(deep), 9); err == nil {
		t.Fatal("depth 10 at limit 9 must fail")
	}
	// Brackets inside strings, escaped quotes included, do not count.
	s := `{"a":"[[[[[[[[[[\"[[[[[[[[[["}`
	if err := CheckDepth([]byte(s), 1); err != nil {
		t.Fatalf("brackets in strings counted: %v", err)
	}
}

func TestHTTPStatus(t *testing.T) {
	for code, want := range map[int]int{
		MethodNotFound: 404, InvalidParams: 400, InvalidRequest: 400, ParseError: 400,
		HeaderMismatch: 400, MissingRequiredClientCapability: 400, UnsupportedProtocolVersion: 400,
		InternalError: 200, -1: 200,
	} {
		if got := HTTPStatus(code); got != want {
			t.Errorf("HTTPStatus(%d) = %d, want %d", code, got, want)
		}
	}
}

func TestEncode(t *testing.T) {
	if got := string(AppendResult(nil, IntID(3), []byte(`{"a":1}`))); got != `{"jsonrpc":"2.0","id":3,"result":{"a":1}}` {
		t.Fatal(got)
	}
	got, err := AppendError(nil, StringID("x"), &Error{Code: InvalidParams, Message: "bad", Data: map[string]string{"uri": "u"}})
	if err != nil || string(got) != `{"jsonrpc":"2.0","id":"x","error":{"code":-32602,"message":"bad","data":{"uri":"u"}}}` {
		t.Fatal(string(got), err)
	}
	got, _ = AppendError(nil, ID{}, &Error{Code: ParseError, Message: "p"})
	if string(got) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p"}}` {
		t.Fatal(string(got))
	}
	// Unencodable data keeps code and message.
	got, err = AppendError(nil, IntID(1), &Error{Code: InternalError, Message: "m", Data: make(chan int)})
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
