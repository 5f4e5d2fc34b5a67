// Package skillmd reads the YAML frontmatter of an Agent Skills SKILL.md
// file and renders it as a JSON object, as the Skills extension (SEP-2640)
// carries it in a skill's entry.
//
// The YAML is parsed by go.yaml.in/yaml/v3, the YAML organisation's
// maintained line of gopkg.in/yaml.v3; this package only walks the node
// tree it returns, so that every value has a JSON form a host's own YAML
// parser agrees with: timestamps and binary scalars stay the strings the
// author wrote (yaml.v3 would make a timestamp a time.Time), mapping keys
// must be scalars, and aliases are expanded within a budget (no billion
// laughs).
package skillmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFrontmatter bounds the frontmatter block, in bytes.
const MaxFrontmatter = 64 << 10

// maxNodes bounds the values rendered, aliases expanded.
const maxNodes = 10000

// Frontmatter is a SKILL.md's frontmatter.
type Frontmatter struct {
	// JSON is the frontmatter as a JSON object, every field the author
	// wrote.
	JSON json.RawMessage
	// Name and Description are its name and description fields.
	Name, Description string
}

// Parse reads the frontmatter block at the start of a SKILL.md: a line
// "---", the YAML, and a line "---" (a UTF-8 byte-order mark before it is
// skipped). The YAML must be a mapping with non-empty string name and
// description fields.
func Parse(src []byte) (Frontmatter, error) {
	block, err := block(src)
	if err != nil {
		return Frontmatter{}, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(block, &doc); err != nil {
		return Frontmatter{}, fmt.Errorf("frontmatter: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return Frontmatter{}, errors.New("frontmatter: not a YAML mapping")
	}
	budget := maxNodes
	v, err := render(doc.Content[0], &budget, 0)
	if err != nil {
		return Frontmatter{}, fmt.Errorf("frontmatter: %w", err)
	}
	m := v.(map[string]any)
	fm := Frontmatter{}
	var ok bool
	if fm.Name, ok = m["name"].(string); !ok || fm.Name == "" {
		return Frontmatter{}, errors.New("frontmatter: name must be a non-empty string")
	}
	if fm.Description, ok = m["description"].(string); !ok || strings.TrimSpace(fm.Description) == "" {
		return Frontmatter{}, errors.New("frontmatter: description must be a non-empty string")
	}
	if fm.JSON, err = json.Marshal(m); err != nil {
		return Frontmatter{}, fmt.Errorf("frontmatter: %w", err)
	}
	return fm, nil
}

// block returns the YAML between the opening and closing "---" lines.
func block(src []byte) ([]byte, error) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	rest, ok := cutLine(src, "---")
	if !ok {
		return nil, errors.New("frontmatter: SKILL.md must begin with a line ---")
	}
	for off := 0; off <= len(rest) && off <= MaxFrontmatter; {
		line, next, more := nextLine(rest[off:])
		if strings.TrimRight(string(line), " \t") == "---" {
			return rest[:off], nil
		}
		if !more {
			break
		}
		off += next
	}
	if len(rest) > MaxFrontmatter {
		return nil, fmt.Errorf("frontmatter: no closing --- within %d bytes", MaxFrontmatter)
	}
	return nil, errors.New("frontmatter: no closing --- line")
}

// cutLine removes a first line equal to want (ended by \n or \r\n).
func cutLine(b []byte, want string) ([]byte, bool) {
	line, next, more := nextLine(b)
	if string(line) != want || !more {
		return nil, false
	}
	return b[next:], true
}

// nextLine returns b's first line without its ending, the offset after
// the ending, and whether there was an ending.
func nextLine(b []byte) (line []byte, next int, more bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, len(b), false
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), i + 1, true
}

// render converts a node to a JSON-encodable value.
func render(n *yaml.Node, budget *int, depth int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("more than %d values (aliases expanded)", maxNodes)
	}
	if depth > 64 {
		return nil, errors.New("nested more than 64 deep")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return render(n.Alias, budget, depth+1)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be a scalar", k.Line)
			}
			if k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q repeated", k.Line, k.Value)
			}
			x, err := render(v, budget, depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = x
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			x, err := render(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, x)
		}
		return s, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, err
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		fallthrough // beyond int64: as a float, as a JavaScript host reads it
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		return f, nil
	}
	return n.Value, nil // !!str, !!timestamp, !!binary and local tags: as written
}
