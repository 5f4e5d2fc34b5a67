package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// The seed corpora live in testdata/fuzz/FuzzParseSchema and
// testdata/fuzz/FuzzParseResult.

// FuzzParseSchema checks that parsing never panics, that every accepted
// schema re-encodes to a fixed point with the same digest, compiles, and
// accepts its own defaults.
func FuzzParseSchema(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSchemaJSON(data)
		var viaUnmarshal Schema
		uerr := json.Unmarshal(data, &viaUnmarshal)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			if uerr == nil && !bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
				t.Fatalf("UnmarshalJSON accepted what parseSchemaJSON rejected: %v", err)
			}
			return
		}
		if uerr != nil {
			t.Fatalf("parseSchemaJSON accepted what UnmarshalJSON rejected: %v", uerr)
		}
		b1, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		s2, err := parseSchemaJSON(b1)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b1, err)
		}
		b2, err := json.Marshal(s2)
		if err != nil {
			t.Fatalf("re-marshal: %v", err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("not a fixed point:\n%s\n%s", b1, b2)
		}
		if b3, _ := json.Marshal(&viaUnmarshal); !bytes.Equal(b1, b3) {
			t.Fatalf("UnmarshalJSON differs:\n%s\n%s", b1, b3)
		}
		r1 := &Request{Message: "m", RequestedSchema: s}
		r2 := &Request{Mode: ModeForm, Message: "m", RequestedSchema: s2}
		if r1.Digest() != r2.Digest() {
			t.Fatal("digest changed across a round trip")
		}
		if err := r1.Validate(); err != nil {
			t.Fatalf("parsed schema makes an invalid request: %v", err)
		}

		// The defaults, taken as an answer, must satisfy the schema
		// (only missing required properties may be reported).
		defaults := map[string]any{}
		for _, fl := range s.fields {
			if fl.def != nil {
				defaults[fl.name] = fl.def
			}
		}
		content, err := json.Marshal(defaults)
		if err != nil {
			t.Fatalf("marshal defaults: %v", err)
		}
		err = s.validateContent(content)
		for _, ve := range validationErrors(err) {
			if ve.Keyword != "required" {
				t.Fatalf("default rejected by validator: %v\nschema %s", ve, b1)
			}
		}
		var ve *ValidationError
		if err != nil && !errors.As(err, &ve) {
			t.Fatalf("validator failed: %v", err)
		}
	})
}

// FuzzParseResult checks that result parsing never panics, that accepted
// results are consistent and survive a round trip, and that checking them
// against a form never panics.
func FuzzParseResult(f *testing.F) {
	form, err := NewForm("fuzz",
		String("name").MinLength(1).Required(),
		String("email").Format(FormatEmail),
		String("day").Format(FormatDate),
		Integer("n").Minimum(0).Maximum(10),
		Number("x"),
		Boolean("ok"),
		TitledEnum("color", Option{"r", "Red"}, Option{"g", "Green"}),
		MultiEnum("tags", "a", "b", "c").MaxItems(2),
		TitledMultiEnum("extras", Option{"x", "X"}),
	)
	if err != nil {
		f.Fatal(err)
	}
	url, err := NewURL("fuzz", "https://example.com/")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseResultJSON(data)
		_, _ = form.CheckResult(data)
		_, _ = url.CheckResult(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if !r.Action.Valid() {
			t.Fatalf("invalid action %q accepted", r.Action)
		}
		if r.Content != nil && r.Action != ActionAccept {
			t.Fatalf("content accepted with %q", r.Action)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		r2, err := parseResultJSON(b)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", b, err)
		}
		if r2.Action != r.Action {
			t.Fatalf("action changed: %q -> %q", r.Action, r2.Action)
		}
		if c1, c2 := decodeAny(t, r.Content), decodeAny(t, r2.Content); !reflect.DeepEqual(c1, c2) {
			t.Fatalf("content changed:\n%s\n%s", r.Content, r2.Content)
		}
		var m map[string]any
		err = r.Decode(&m)
		if r.Action == ActionAccept && err != nil {
			t.Fatalf("decode accepted content: %v", err)
		}
		if r.Action != ActionAccept && !errors.Is(err, ErrNotAccepted) {
			t.Fatalf("decode of %q: %v", r.Action, err)
		}
	})
}

func decodeAny(t *testing.T, raw json.RawMessage) any {
	t.Helper()
	if raw == nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}
