package elicit

import (
	"errors"
	"strings"
	"testing"
)

// TestAnswerRulesBeyondSchema: multi-select items are unique, integers lie
// within the safe range unless the field's own bounds say otherwise, and
// echoed keys and values are cut.
func TestAnswerRulesBeyondSchema(t *testing.T) {
	form, err := NewForm("Tell us",
		MultiEnum("tags", "option1", "option2").Required(),
		TitledMultiEnum("colors", Option{"r", "Red"}, Option{"g", "Green"}),
		Integer("count"),
		Integer("big").Maximum(1e20),
		Integer("low").Minimum(0),
		Number("ratio"),
		Enum("size", "s", "m"),
	)
	if err != nil {
		t.Fatal(err)
	}
	huge := strings.Repeat("q", 40<<10)
	for _, tc := range []struct {
		name    string
		content string
		field   string // the field of the one problem; "" when accepted
		keyword string
		reason  string
	}{
		{"distinct", `{"tags":["option1","option2"],"colors":["r"]}`, "", "", ""},
		{"duplicate", `{"tags":["option1","option1"]}`, "tags", "uniqueItems", `item 1: "option1" is already selected (item 0)`},
		{"titled duplicate", `{"tags":["option1"],"colors":["g","r","g"]}`, "colors", "uniqueItems", `item 2: "g" is already selected (item 0)`},
		{"safe integer", `{"tags":[],"count":9007199254740991}`, "", "", ""},
		{"negative safe integer", `{"tags":[],"count":-9007199254740991}`, "", "", ""},
		{"2^53", `{"tags":[],"count":9007199254740992}`, "count", "maximum", "must be at most 9007199254740991 (the safe integer range), got 9007199254740992"},
		{"1e308", `{"tags":[],"count":1e308}`, "count", "maximum", "got 1e308"},
		{"-1e308", `{"tags":[],"count":-1e308}`, "count", "minimum", "must be at least -9007199254740991"},
		{"within the field's maximum", `{"tags":[],"big":1e19}`, "", "", ""},
		{"over the field's maximum", `{"tags":[],"big":1e21}`, "big", "maximum", "must be at most 100000000000000000000"},
		{"open side of a bounded field", `{"tags":[],"low":1e300}`, "low", "maximum", "safe integer range"},
		{"numbers are not integers", `{"tags":[],"ratio":1e308}`, "", "", ""},
		{"huge enum value", `{"tags":[],"size":"` + huge + `"}`, "size", "enum", `is not one of the allowed values "s", "m"`},
		{"huge key", `{"tags":[],"` + huge + `":{}}`, huge, "content", "must be a string, number, boolean or list of strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := form.CheckResult([]byte(`{"action":"accept","content":` + tc.content + `}`))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v, want a *ValidationError", err)
			}
			if ve.Field != tc.field || ve.Keyword != tc.keyword || !strings.Contains(ve.Reason, tc.reason) {
				t.Errorf("got %s %s %q, want %s %s %q", clipForTest(ve.Field), ve.Keyword, ve.Reason, clipForTest(tc.field), tc.keyword, tc.reason)
			}
			if n := len(err.Error()); n > 600 {
				t.Errorf("the error is %d bytes: %.200s…", n, err.Error())
			}
		})
	}
}

func clipForTest(s string) string {
	if len(s) > 20 {
		return s[:20] + "…"
	}
	return s
}

// An integer default outside the safe range needs the field's own bound.
func TestIntegerDefaultSafeRange(t *testing.T) {
	if _, err := NewSchema(Integer("n").Default(1e16)); err == nil || !strings.Contains(err.Error(), "outside the safe integer range") {
		t.Errorf("default 1e16 without a maximum: %v", err)
	}
	if _, err := NewSchema(Integer("n").Maximum(1e17).Default(1e16)); err != nil {
		t.Errorf("default 1e16 with maximum 1e17: %v", err)
	}
}

// A format error quotes the value and the parser's complaint, both cut.
func TestFormatErrorIsClipped(t *testing.T) {
	form, err := NewForm("Where?", String("site").Format(FormatURI))
	if err != nil {
		t.Fatal(err)
	}
	_, err = form.CheckResult([]byte(`{"action":"accept","content":{"site":"` + strings.Repeat("%zz", 10<<10) + `"}}`))
	var ve *ValidationError
	if !errors.As(err, &ve) || ve.Keyword != "format" {
		t.Fatalf("error %v, want a format violation", err)
	}
	if n := len(err.Error()); n > 600 {
		t.Errorf("the error is %d bytes: %.200s…", n, err.Error())
	}
}
