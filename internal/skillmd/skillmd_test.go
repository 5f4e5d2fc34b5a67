package skillmd

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	src := "\xef\xbb\xbf---\r\nname: pdf-processing\r\ndescription: Extract, fill, and assemble PDF documents\r\nlicense: Apache-2.0\r\nmetadata:\r\n  version: 2.1.0\r\n  released: 2024-01-02\r\n  count: 3\r\n  ratio: 0.5\r\n  beta: false\r\n  tags: [a, b]\r\n  none: null\r\n---  \r\n\r\n# Body\n"
	fm, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if fm.Name != "pdf-processing" || fm.Description != "Extract, fill, and assemble PDF documents" {
		t.Fatalf("name %q description %q", fm.Name, fm.Description)
	}
	var got map[string]any
	if err := json.Unmarshal(fm.JSON, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "license": "Apache-2.0",
		"metadata": map[string]any{
			"version": "2.1.0", "released": "2024-01-02", // a timestamp stays the string written
			"count": 3.0, "ratio": 0.5, "beta": false, "tags": []any{"a", "b"}, "none": nil,
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("frontmatter\n got %v\nwant %v", got, want)
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"no opening line", "name: x\n", "must begin with a line ---"},
		{"no closing line", "---\nname: x\ndescription: y\n", "no closing --- line"},
		{"not a mapping", "---\n- a\n---\n", "not a YAML mapping"},
		{"empty", "---\n---\n", "not a YAML mapping"},
		{"no name", "---\ndescription: y\n---\n", "name must be a non-empty string"},
		{"number name", "---\nname: 12\ndescription: y\n---\n", "name must be a non-empty string"},
		{"no description", "---\nname: x\n---\n", "description must be"},
		{"blank description", "---\nname: x\ndescription: \"  \"\n---\n", "description must be"},
		{"bad yaml", "---\nname: [x\n---\n", "frontmatter:"},
		{"complex key", "---\n? [a, b]\n: c\nname: x\ndescription: y\n---\n", "mapping key must be a scalar"},
		{"merge key", "---\nbase: &b {k: v}\nm:\n  <<: *b\nname: x\ndescription: y\n---\n", "merge keys"},
		{"infinity", "---\nname: x\ndescription: y\nv: .inf\n---\n", "no JSON form"},
		{"alias bomb", "---\nname: x\ndescription: y\n" + bomb() + "---\n", "more than 10000 values"},
		{"too long", "---\nname: x\ndescription: y\n" + strings.Repeat("k: v\n", MaxFrontmatter/4) + "---\n", "within 65536 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// bomb is a YAML alias chain whose expansion doubles at every level.
func bomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x]\n")
	for i := 1; i < 20; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	return b.String()
}

// FuzzParse: any input is parsed or refused, never a panic, and what is
// accepted is a JSON object with the name and description returned.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\nname: a\ndescription: b\n---\nbody"))
	f.Add([]byte("---\r\nname: a\r\ndescription: b\r\nmetadata: {x: [1, 2.5, true, null, 2024-01-01]}\r\n---"))
	f.Add([]byte("---\nname: &n a\ndescription: *n\n---\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		fm, err := Parse(src)
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(fm.JSON, &m); err != nil {
			t.Fatalf("accepted frontmatter is not a JSON object: %v", err)
		}
		if m["name"] != fm.Name || m["description"] != fm.Description {
			t.Fatalf("name/description %q/%q differ from the object %v", fm.Name, fm.Description, m)
		}
	})
}
