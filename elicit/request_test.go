package elicit

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

func TestNewURL(t *testing.T) {
	tests := []struct {
		url     string
		wantErr string
	}{
		{"https://example.com/connect?state=abc", ""},
		{"http://localhost:8080/x", ""},
		{"HTTPS://Example.com", ""},
		{"", "url is required"},
		{"/relative/path", "must be an absolute http or https URL"},
		{"example.com/x", "must be an absolute http or https URL"},
		{"ftp://example.com/x", "must be an absolute http or https URL"},
		{"javascript:alert(1)", "must be an absolute http or https URL"},
		{"https://", "has no host"},
		{"https:///path", "has no host"},
		{"https://user:pass@example.com", "must not embed user credentials"},
		{"https://exa mple.com", "invalid url"},
		{"https://example.com/\x7f", "invalid url"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			r, err := NewURL("Connect your account", tt.url)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				want := `{"mode":"url","message":"Connect your account","url":` + mustJSON(t, tt.url) + `}`
				if got := mustJSON(t, r); got != want {
					t.Errorf("got %s want %s", got, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
	if _, err := NewURL("", "https://example.com"); err == nil {
		t.Error("empty message accepted")
	}
}

func TestRequestValidate(t *testing.T) {
	schema, err := NewSchema(String("a"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		req     *Request
		wantErr string
	}{
		{"form", &Request{Mode: "form", Message: "m", RequestedSchema: schema}, ""},
		{"absent mode is form", &Request{Message: "m", RequestedSchema: schema}, ""},
		{"url", &Request{Mode: "url", Message: "m", URL: "https://x.example"}, ""},
		{"legacy url with elicitationId", &Request{Mode: "url", Message: "m", URL: "https://x.example", ElicitationID: "e1"}, ""},
		{"nil", nil, "nil request"},
		{"form without message", &Request{RequestedSchema: schema}, "needs a message"},
		{"form without schema", &Request{Message: "m"}, "needs a requestedSchema"},
		{"form with url", &Request{Message: "m", RequestedSchema: schema, URL: "https://x.example"}, "must not carry a url"},
		{"form with elicitationId", &Request{Message: "m", RequestedSchema: schema, ElicitationID: "e"}, "must not carry an elicitationId"},
		{"url without url", &Request{Mode: "url", Message: "m"}, "url is required"},
		{"url with schema", &Request{Mode: "url", Message: "m", URL: "https://x.example", RequestedSchema: schema}, "must not carry a requestedSchema"},
		{"url relative", &Request{Mode: "url", Message: "m", URL: "/x"}, "absolute http or https"},
		{"unknown mode", &Request{Mode: "Form", Message: "m", RequestedSchema: schema}, `unknown elicitation mode "Form"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v, want error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestDecodedRequestValidate(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"method":"ignored","message":"m","requestedSchema":{"type":"object","properties":{}},"_meta":{}}`: true,
		`{"mode":"url","message":"m","url":"https://example.com"}`:                                          true,
		`{"mode":"url","message":"m"}`:   false,
		`{"mode":"other","message":"m"}`: false,
	} {
		var r Request
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if err := r.Validate(); (err == nil) != ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", in, err, ok)
		}
	}
}

func digestHex(r *Request) string {
	d := r.Digest()
	return hex.EncodeToString(d[:])
}

func TestDigest(t *testing.T) {
	form, err := NewForm("Your name?", String("name").Required(), Integer("age").Minimum(0).Default(30))
	if err != nil {
		t.Fatal(err)
	}
	// Golden value: the digest must not change across runs or releases
	// without a deliberate decision (it binds answers in requestState). It
	// was computed independently: SHA-256 over the length-prefixed
	// (8-byte big-endian) fields "elicit.Request/v1", mode, message, url,
	// elicitationId, then 0x01 and the SHA-256 of the schema's canonical
	// encoding.
	const golden = "1af88d818b8be930249b498828ea5eb0ae517c677744c0def3baa005441736ef"
	got := digestHex(form)
	t.Logf("digest %s", got)
	if got != golden {
		t.Errorf("digest changed: got %s want %s", got, golden)
	}
	if digestHex(form) != got {
		t.Error("digest not deterministic")
	}

	// A wire round trip, with the mode omitted and keywords reordered,
	// gives the same digest.
	wire := `{"message":"Your name?","requestedSchema":{"required":["name"],"type":"object","properties":{"name":{"type":"string"},"age":{"default":30,"minimum":0,"type":"integer"}}},"_meta":{"x":1}}`
	var decoded Request
	if err := json.Unmarshal([]byte(wire), &decoded); err != nil {
		t.Fatal(err)
	}
	if digestHex(&decoded) != got {
		t.Errorf("round-trip digest differs: %s vs %s", digestHex(&decoded), got)
	}
	reencoded, _ := json.Marshal(&decoded)
	var again Request
	if err := json.Unmarshal(reencoded, &again); err != nil {
		t.Fatal(err)
	}
	if digestHex(&again) != got {
		t.Error("second round trip digest differs")
	}

	// Any change to the question changes the digest.
	variants := map[string]*Request{}
	variants["message"], _ = NewForm("Your name? ", String("name").Required(), Integer("age").Minimum(0).Default(30))
	variants["not required"], _ = NewForm("Your name?", String("name"), Integer("age").Minimum(0).Default(30))
	variants["order"], _ = NewForm("Your name?", Integer("age").Minimum(0).Default(30), String("name").Required())
	variants["default"], _ = NewForm("Your name?", String("name").Required(), Integer("age").Minimum(0).Default(31))
	for name, v := range variants {
		if v == nil {
			t.Fatalf("%s: build failed", name)
		}
		if digestHex(v) == got {
			t.Errorf("%s: digest unchanged", name)
		}
	}

	u1, _ := NewURL("m", "https://example.com/a")
	u2, _ := NewURL("m", "https://example.com/b")
	if digestHex(u1) == digestHex(u2) {
		t.Error("url change not reflected in digest")
	}
	var nilReq *Request
	_ = nilReq.Digest() // must not panic
}
