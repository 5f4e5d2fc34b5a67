package elicit

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

func isValidationError(err error) bool {
	var ve *ValidationError
	return errors.As(err, &ve)
}

func validationErrors(err error) []*ValidationError {
	var out []*ValidationError
	var walk func(error)
	walk = func(err error) {
		if ve, ok := err.(*ValidationError); ok {
			out = append(out, ve)
			return
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

func TestParseResult(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		wantAction  Action
		wantContent string
		wantErr     string
	}{
		{"accept with content", `{"action":"accept","content":{"a":"x","n":1.5,"b":true,"m":["p","q"],"e":[]}}`, ActionAccept, `{"a":"x","n":1.5,"b":true,"m":["p","q"],"e":[]}`, ""},
		{"accept without content", `{"action":"accept"}`, ActionAccept, "", ""},
		{"decline", `{"action":"decline"}`, ActionDecline, "", ""},
		{"cancel", `{"action":"cancel"}`, ActionCancel, "", ""},
		{"null content is absent", `{"action":"decline","content":null}`, ActionDecline, "", ""},
		{"meta and unknown fields ignored", `{"action":"cancel","_meta":{"k":"v"},"extra":1}`, ActionCancel, "", ""},
		{"not json", `{"action":`, "", "", "invalid result"},
		{"keys are case-sensitive", `{"ACTION":"accept"}`, "", "", "missing action"},
		{"case variant cannot override", `{"action":"decline","Action":"accept","CONTENT":{"a":1}}`, ActionDecline, "", ""},
		{"duplicate action", `{"action":"decline","action":"accept"}`, "", "", `duplicate key "action"`},
		{"duplicate content key", `{"action":"accept","content":{"a":"x","a":"y"}}`, "", "", `duplicate key "a"`},
		{"not an object", `["accept"]`, "", "", "must be a JSON object"},
		{"null", `null`, "", "", "must be a JSON object"},
		{"empty", ``, "", "", "must be a JSON object"},
		{"trailing data", `{"action":"accept"} {}`, "", "", "invalid result"},
		{"missing action", `{"content":{}}`, "", "", "missing action"},
		{"unknown action", `{"action":"accepted"}`, "", "", `action must be "accept", "decline" or "cancel"`},
		{"action case", `{"action":"Accept"}`, "", "", "action must be"},
		{"action not string", `{"action":1}`, "", "", "action must be"},
		{"content with decline", `{"action":"decline","content":{}}`, "", "", `content is only allowed with "accept", not "decline"`},
		{"content with cancel", `{"action":"cancel","content":{"a":"x"}}`, "", "", `content is only allowed with "accept"`},
		{"content not object", `{"action":"accept","content":["x"]}`, "", "", "content: must be a JSON object"},
		{"content string", `{"action":"accept","content":"x"}`, "", "", "content: must be a JSON object"},
		{"content nested object", `{"action":"accept","content":{"a":{"b":1}}}`, "", "", `property "a": must be a string, number, boolean or list of strings, got an object`},
		{"content null value", `{"action":"accept","content":{"a":null}}`, "", "", `property "a": must be a string, number, boolean or list of strings, got null`},
		{"content mixed list", `{"action":"accept","content":{"a":["x",1]}}`, "", "", `property "a": must be a string, number, boolean or list of strings, got a list containing a number`},
		{"content huge number", `{"action":"accept","content":{"a":1e400}}`, "", "", `property "a": number 1e400 is out of range`},
		{"content tiny number", `{"action":"accept","content":{"a":1e-999999}}`, "", "", `property "a": number 1e-999999 is out of range`},
		{"content long number", `{"action":"accept","content":{"a":0.` + strings.Repeat("1", 200) + `}}`, "", "", `property "a": number 0.` + strings.Repeat("1", 118) + `…(202 bytes) is out of range`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := parseResultJSON([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "elicit: invalid result") {
					t.Errorf("missing context: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Action != tt.wantAction || string(r.Content) != tt.wantContent {
				t.Errorf("got %q %s, want %q %s", r.Action, r.Content, tt.wantAction, tt.wantContent)
			}
		})
	}
}

func TestResultDecode(t *testing.T) {
	r, err := parseResultJSON([]byte(`{"action":"accept","content":{"name":"Ann","age":30,"tags":["a"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Name string   `json:"name"`
		Age  int      `json:"age"`
		Tags []string `json:"tags"`
	}
	if err := r.Decode(&v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "Ann" || v.Age != 30 || len(v.Tags) != 1 {
		t.Errorf("decoded %+v", v)
	}
	var bad struct {
		Name int `json:"name"`
	}
	if err := r.Decode(&bad); err == nil || !strings.Contains(err.Error(), "elicit: decoding content") {
		t.Errorf("type mismatch: %v", err)
	}

	empty := &Result{Action: ActionAccept}
	m := map[string]any{}
	if err := empty.Decode(&m); err != nil || len(m) != 0 {
		t.Errorf("accept without content: %v %v", m, err)
	}
	for _, tc := range []struct {
		a          Action
		want, not  error
		saysAction string
	}{
		{ActionDecline, ErrDeclined, ErrCancelled, `"decline"`},
		{ActionCancel, ErrCancelled, ErrDeclined, `"cancel"`},
	} {
		err := (&Result{Action: tc.a}).Decode(&m)
		if !errors.Is(err, ErrNotAccepted) || !errors.Is(err, tc.want) || errors.Is(err, tc.not) || !strings.Contains(err.Error(), tc.saysAction) {
			t.Errorf("%s: got %v, want %v (and ErrNotAccepted, not %v)", tc.a, err, tc.want, tc.not)
		}
	}
	if errors.Is(ErrNotAccepted, ErrDeclined) {
		t.Error("ErrNotAccepted matches ErrDeclined")
	}
	if err := (*Result)(nil).Decode(&m); err == nil {
		t.Error("nil result decoded")
	}
}

// A struct without json tags would decode to zero values, since keys
// match exactly; Decode says so instead, naming the key, the field and
// the tag that fixes it.
func TestResultDecodeCaseTrap(t *testing.T) {
	form, err := NewForm("Who?", String("name").Required(), String("email"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := form.CheckResult([]byte(`{"action":"accept","content":{"name":"Ann","email":"ann@example.com"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var untagged struct {
		Name  string
		Email string `json:"email"`
	}
	err = res.Decode(&untagged)
	if err == nil {
		t.Fatalf("decoded %+v without a word; want an error", untagged)
	}
	for _, want := range []string{`"name"`, "Name", "`json:\"name\"`", "elicit: decoding content"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %s", err, want)
		}
	}
	// The tagged struct decodes; so do maps, whatever their keys.
	var tagged struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}
	if err := res.Decode(&tagged); err != nil || tagged.Name != "Ann" || tagged.Email != "ann@example.com" {
		t.Fatalf("tagged: %+v %v", tagged, err)
	}
	var m map[string]string
	if err := res.Decode(&m); err != nil || m["name"] != "Ann" {
		t.Fatalf("map: %v %v", m, err)
	}
	// Keys that match nothing are still ignored.
	var other struct {
		Phone string `json:"phone"`
	}
	if err := res.Decode(&other); err != nil {
		t.Fatalf("unrelated struct: %v", err)
	}
}

func testForm(t testing.TB) *Request {
	t.Helper()
	r, err := NewForm("Book a table",
		String("name").MinLength(2).MaxLength(20).Required(),
		String("email").Format(FormatEmail).Required(),
		String("site").Format(FormatURI),
		String("day").Format(FormatDate),
		String("at").Format(FormatDateTime),
		Integer("guests").Minimum(1).Maximum(8),
		Number("budget").Minimum(0.5),
		Boolean("terrace"),
		Enum("size", "s", "m", "l"),
		TitledEnum("color", Option{"#f00", "Red"}, Option{"#0f0", "Green"}),
		LegacyEnum("legacy", []string{"a", "b"}, []string{"A", "B"}),
		MultiEnum("diet", "vegan", "halal", "kosher").MaxItems(2),
		TitledMultiEnum("extras", Option{"cake", "Cake"}, Option{"wine", "Wine"}).MinItems(1),
	)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

type wantVE struct{ field, keyword, reason string }

// TestCheckResult covers every outcome of checking an answer against the
// form it answers.
func TestCheckResult(t *testing.T) {
	form := testForm(t)
	base := `"name":"Ann","email":"ann@example.com"`
	accept := func(extra string) string {
		if extra != "" {
			extra = "," + extra
		}
		return `{"action":"accept","content":{` + base + extra + `}}`
	}
	tests := []struct {
		name       string
		in         string
		wantAction Action
		want       []wantVE // nil: success
		wantErr    string   // plain (non-validation) error
	}{
		{"accept minimal", accept(""), ActionAccept, nil, ""},
		{"accept full", accept(`"site":"https://example.com/x","day":"2024-02-29","at":"2024-02-29T12:30:00+02:00","guests":8,"budget":0.5,"terrace":false,"size":"m","color":"#0f0","legacy":"b","diet":["vegan","halal"],"extras":["wine"]`), ActionAccept, nil, ""},
		{"integer as 3.0", accept(`"guests":3.0`), ActionAccept, nil, ""},
		{"extra property ignored", accept(`"unknown":"x"`), ActionAccept, nil, ""},
		{"decline", `{"action":"decline"}`, ActionDecline, nil, ""},
		{"cancel", `{"action":"cancel"}`, ActionCancel, nil, ""},
		{"decline not validated even if form has required", `{"action":"decline","_meta":{}}`, ActionDecline, nil, ""},
		{"missing required", `{"action":"accept","content":{"name":"Ann"}}`, "", []wantVE{{"email", "required", "is required"}}, ""},
		{"accept without content", `{"action":"accept"}`, "", []wantVE{{"name", "required", "is required"}, {"email", "required", "is required"}}, ""},
		{"wrong type string", accept(`"guests":"two"`), "", []wantVE{{"guests", "type", "must be an integer, got a string"}}, ""},
		{"wrong type fractional", accept(`"guests":2.5`), "", []wantVE{{"guests", "type", "must be an integer, got a number"}}, ""},
		{"wrong type boolean", accept(`"terrace":"yes"`), "", []wantVE{{"terrace", "type", "must be a boolean, got a string"}}, ""},
		{"wrong type number", accept(`"budget":true`), "", []wantVE{{"budget", "type", "must be a number, got a boolean"}}, ""},
		{"wrong type multi", accept(`"diet":"vegan"`), "", []wantVE{{"diet", "type", "must be a list, got a string"}}, ""},
		{"wrong type titled", accept(`"color":1`), "", []wantVE{{"color", "type", "must be a string, got a number"}}, ""},
		{"above maximum", accept(`"guests":9`), "", []wantVE{{"guests", "maximum", "must be at most 8, got 9"}}, ""},
		{"below minimum", accept(`"guests":0`), "", []wantVE{{"guests", "minimum", "must be at least 1, got 0"}}, ""},
		{"below fractional minimum", accept(`"budget":0.25`), "", []wantVE{{"budget", "minimum", "must be at least 0.5, got 0.25"}}, ""},
		{"too short", `{"action":"accept","content":{"name":"A","email":"a@b.co"}}`, "", []wantVE{{"name", "minLength", "must be at least 2 characters long, got 1"}}, ""},
		{"too long", `{"action":"accept","content":{"name":"AAAAAAAAAAAAAAAAAAAAA","email":"a@b.co"}}`, "", []wantVE{{"name", "maxLength", "must be at most 20 characters long, got 21"}}, ""},
		{"bad email", `{"action":"accept","content":{"name":"Ann","email":"ann.example.com"}}`, "", []wantVE{{"email", "format", `"ann.example.com" is not a valid email address`}}, ""},
		{"bad date", accept(`"day":"2023-02-29"`), "", []wantVE{{"day", "format", `"2023-02-29" is not a valid date (YYYY-MM-DD)`}}, ""},
		{"bad date format", accept(`"day":"29/02/2024"`), "", []wantVE{{"day", "format", "is not a valid date"}}, ""},
		{"bad date-time", accept(`"at":"2024-02-29 12:30"`), "", []wantVE{{"at", "format", "is not a valid date-time"}}, ""},
		{"bad uri", accept(`"site":"example.com"`), "", []wantVE{{"site", "format", "is not a valid absolute URI"}}, ""},
		{"enum non-member", accept(`"size":"xl"`), "", []wantVE{{"size", "enum", `"xl" is not one of the allowed values "s", "m", "l"`}}, ""},
		{"legacy non-member", accept(`"legacy":"A"`), "", []wantVE{{"legacy", "enum", `"A" is not one of the allowed values "a", "b"`}}, ""},
		{"titled non-member (title instead of const)", accept(`"color":"Red"`), "", []wantVE{{"color", "oneOf", `"Red" is not one of the allowed values "#f00", "#0f0"`}}, ""},
		{"multi non-member", accept(`"diet":["vegan","paleo"]`), "", []wantVE{{"diet", "enum", `item 1: "paleo" is not one of the allowed values`}}, ""},
		{"titled multi non-member", accept(`"extras":["cake","tea"]`), "", []wantVE{{"extras", "anyOf", `item 1: "tea" is not one of the allowed values "cake", "wine"`}}, ""},
		{"multi too many", accept(`"diet":["vegan","halal","kosher"]`), "", []wantVE{{"diet", "maxItems", "must have at most 2 selections, got 3"}}, ""},
		{"multi too few", accept(`"extras":[]`), "", []wantVE{{"extras", "minItems", "must have at least 1 selection, got 0"}}, ""},
		{"several errors in schema order", `{"action":"accept","content":{"size":"xl","guests":0,"email":"x"}}`, "", []wantVE{
			{"name", "required", "is required"},
			{"email", "format", "is not a valid email"},
			{"guests", "minimum", "must be at least 1"},
			{"size", "enum", "is not one of"},
		}, ""},
		{"nested value", accept(`"guests":{"n":1}`), "", []wantVE{{"guests", "content", "must be a string, number, boolean or list of strings, got an object"}}, ""},
		{"malformed", `{"action":"accept","content":`, "", nil, "invalid result"},
		{"content with decline", `{"action":"decline","content":{}}`, "", nil, "content is only allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := form.CheckResult([]byte(tt.in))
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want error containing %q", err, tt.wantErr)
				}
				return
			case tt.want != nil:
				if err == nil {
					t.Fatalf("accepted, want %v", tt.want)
				}
				var first *ValidationError
				if !errors.As(err, &first) {
					t.Fatalf("error %v is not a *ValidationError", err)
				}
				got := validationErrors(err)
				if len(got) != len(tt.want) {
					t.Fatalf("got %d errors, want %d:\n%v", len(got), len(tt.want), err)
				}
				for i, w := range tt.want {
					g := got[i]
					if g.Field != w.field || g.Keyword != w.keyword || !strings.Contains(g.Reason, w.reason) {
						t.Errorf("error %d = {%q %q %q}, want {%q %q ~%q}", i, g.Field, g.Keyword, g.Reason, w.field, w.keyword, w.reason)
					}
				}
				if res != nil {
					t.Error("result returned with an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Action != tt.wantAction {
				t.Errorf("action %q, want %q", res.Action, tt.wantAction)
			}
		})
	}
}

func TestValidationErrorMessage(t *testing.T) {
	_, err := testForm(t).CheckResult([]byte(`{"action":"accept","content":{"name":"Ann","email":"nope"}}`))
	want := `elicit: content does not match the requested schema: property "email": "nope" is not a valid email address: missing @`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	if got := (&ValidationError{Reason: "must be a JSON object"}).Error(); got != "content: must be a JSON object" {
		t.Errorf("got %q", got)
	}
}

func TestCheckResultURLMode(t *testing.T) {
	r, err := NewURL("Sign in to continue", "https://example.com/login")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]Action{
		`{"action":"accept"}`:  ActionAccept,
		`{"action":"decline"}`: ActionDecline,
		`{"action":"cancel"}`:  ActionCancel,
	} {
		res, err := r.CheckResult([]byte(in))
		if err != nil || res.Action != want {
			t.Errorf("%s: %v %v", in, res, err)
		}
	}
	if _, err := r.CheckResult([]byte(`{"action":"accept","content":{"a":"x"}}`)); err == nil || !strings.Contains(err.Error(), "must not carry content") {
		t.Errorf("url accept with content: %v", err)
	}
}

func TestCheckResultBadRequests(t *testing.T) {
	ok := []byte(`{"action":"accept"}`)
	if _, err := (*Request)(nil).CheckResult(ok); err == nil {
		t.Error("nil request")
	}
	if _, err := (&Request{Message: "m"}).CheckResult(ok); err == nil {
		t.Error("form without schema")
	}
	if _, err := (&Request{Mode: "x", Message: "m"}).CheckResult(ok); err == nil {
		t.Error("unknown mode")
	}
	// Decline needs no valid request state to be reported.
	if res, err := (&Request{Message: "m"}).CheckResult([]byte(`{"action":"decline"}`)); err != nil || res.Action != ActionDecline {
		t.Errorf("decline: %v %v", res, err)
	}
}

func TestValidateContent(t *testing.T) {
	s, err := NewSchema(Integer("n").Required())
	if err != nil {
		t.Fatal(err)
	}
	for in, ok := range map[string]bool{
		`{"n":1}`:        true,
		` {"n":-1} `:     true,
		`{"n":1,"x":[]}`: true,
		`{}`:             false,
		``:               false,
		`null`:           false,
		`[]`:             false,
		`{"n":1} 2`:      false,
		`{"n":`:          false,
		`{"n":null}`:     false,
	} {
		if err := s.validateContent(json.RawMessage(in)); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", in, err, ok)
		}
	}
}

// TestConcurrentValidation exercises the lazily compiled validator from
// many goroutines; run with -race.
func TestConcurrentValidation(t *testing.T) {
	form := testForm(t)
	good := []byte(`{"action":"accept","content":{"name":"Ann","email":"ann@example.com","guests":2}}`)
	bad := []byte(`{"action":"accept","content":{"name":"Ann","email":"x","guests":20}}`)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 50 {
				if _, err := form.CheckResult(good); err != nil {
					t.Error(err)
					return
				}
				if _, err := form.CheckResult(bad); len(validationErrors(err)) != 2 {
					t.Errorf("goroutine %d: %v", i, err)
					return
				}
				_ = form.Digest()
			}
		})
	}
	wg.Wait()
}

// TestCheckResultDropsUndefinedProperties checks that properties outside
// the schema never reach Decode, including case variants of real ones.
func TestCheckResultDropsUndefinedProperties(t *testing.T) {
	form, err := NewForm("m", String("name").MaxLength(5), Integer("n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := form.CheckResult([]byte(`{"action":"accept","content":{"NAME":"much too long","n":2,"name":"Ann","x":["y"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Content), `{"n":2,"name":"Ann"}`; got != want {
		t.Errorf("content %s, want %s", got, want)
	}
	var v struct {
		Name string `json:"name"`
	}
	if err := res.Decode(&v); err != nil || v.Name != "Ann" {
		t.Errorf("decoded %q, %v", v.Name, err)
	}
	// Nothing to drop: the content is returned as sent.
	res, err = form.CheckResult([]byte(`{"action":"accept","content":{ "name" : "Ann" }}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Content), `{ "name" : "Ann" }`; got != want {
		t.Errorf("content %s, want %s", got, want)
	}
}
