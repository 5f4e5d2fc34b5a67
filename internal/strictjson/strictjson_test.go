package strictjson

import (
	stdjson "encoding/json"
	"errors"
	"testing"
)

type target struct {
	Name   string             `json:"name"`
	Amount int                `json:"amount"`
	Inner  *struct{ X int }   `json:"inner"`
	Raw    stdjson.RawMessage `json:"raw"`
}

func TestCaseSensitive(t *testing.T) {
	var v target
	if err := Unmarshal([]byte(`{"name":"a","NAME":"b","Amount":100000,"amount":10}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.Name != "a" || v.Amount != 10 {
		t.Fatalf("case variants leaked into fields: %+v", v)
	}
	// The stdlib would take the last case variant.
	var std target
	_ = stdjson.Unmarshal([]byte(`{"name":"a","NAME":"b"}`), &std)
	if std.Name != "b" {
		t.Skip("encoding/json changed its matching; this test documents the difference")
	}
}

func TestKelvinSign(t *testing.T) {
	// U+212A KELVIN SIGN folds to 'k' in encoding/json.
	var v struct {
		Key string `json:"key"`
	}
	if err := Unmarshal([]byte("{\"\u212aey\":\"smuggled\"}"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Key != "" {
		t.Fatalf("unicode case folding matched: %q", v.Key)
	}
}

func TestErrors(t *testing.T) {
	var v target
	if err := Unmarshal([]byte(`{"name":1}`), &v); err == nil {
		t.Fatal("type mismatch must fail")
	} else {
		var te *stdjson.UnmarshalTypeError
		if !errors.As(err, &te) {
			t.Fatalf("type errors keep the encoding/json type: %T", err)
		}
	}
	if err := Unmarshal([]byte(`{"name":"a"} x`), &v); err == nil {
		t.Fatal("trailing data must fail")
	}
	if err := Unmarshal([]byte(`{"name":`), &v); err == nil {
		t.Fatal("truncated input must fail")
	}
	if err := Unmarshal([]byte(` {"raw": {"a" : [1, 2]} } `), &v); err != nil || string(v.Raw) != `{"a" : [1, 2]}` {
		t.Fatalf("raw = %s, %v", v.Raw, err)
	}
}
