package skillmd

import (
	"encoding/json"
	"reflect"
	"testing"
)

// What a host's YAML 1.2 parser (the conformance suite's "yaml", and
// js-yaml, agree on every case here) reads from each frontmatter, as
// JSON: Parse must produce the same, or refuse the SKILL.md. A host that
// compares field by field otherwise rejects the skill.
func TestReviewParseAgreesWithYAML12(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"leading zero is decimal", "v: 017", `{"v":17}`},
		{"leading zeros, signed", "v: -010", `{"v":-10}`},
		{"float key", "1.0: x", `{"1":"x"}`},
		{"hex key", "0x1F: x", `{"31":"x"}`},
		{"bool key", "True: x", `{"true":"x"}`},
		{"exponent key", "1e3: x", `{"1000":"x"}`},
		{"NEL in a quoted string", "v: \"a\u0085b\"", `{"v":"a\u0085b"}`},
		{"NEL in a block scalar", "v: |\n  a\u0085\n", `{"v":"a\u0085\n"}`},
		{"float beyond float64", "v: 1e400", ``}, // Infinity: no JSON form, so refused
		{"second document", "...\nz: 1", ``},     // a host's parser refuses it
	} {
		t.Run(tc.name, func(t *testing.T) {
			fm, err := Parse([]byte("---\nname: x\ndescription: y\n" + tc.yaml + "\n---\n"))
			if err != nil {
				return // refused: the host never sees it
			}
			if tc.want == "" {
				t.Fatalf("accepted as %s; a host's parser has no JSON for it", fm.JSON)
			}
			var got, want map[string]any
			_ = json.Unmarshal(fm.JSON, &got)
			_ = json.Unmarshal([]byte(tc.want), &want)
			want["name"], want["description"] = "x", "y"
			if !reflect.DeepEqual(got, want) {
				t.Errorf("frontmatter %s, a YAML 1.2 host reads %v", fm.JSON, want)
			}
		})
	}
}

// Forms that YAML parsers disagree on (yaml.v3 and js-yaml read YAML 1.1
// numbers and explicit tags; the conformance suite's "yaml" package reads
// the YAML 1.2 core schema): refused, as no rendering matches every host.
func TestReviewParseRefusesDisputedForms(t *testing.T) {
	for _, v := range []string{"1_000", "1_", "0xff_ff", "0b101", "-0x1", "+0x1F", "!!binary aGVsbG8=", "!!float 1", "!!set {a, b}", "!custom x"} {
		if fm, err := Parse([]byte("---\nname: x\ndescription: y\nv: " + v + "\n---\n")); err == nil {
			t.Errorf("v: %s accepted as %s", v, fm.JSON)
		}
	}
}
