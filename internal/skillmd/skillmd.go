// Package skillmd reads the YAML frontmatter of an Agent Skills SKILL.md
// file and renders it as a JSON object, as the Skills extension (SEP-2640)
// carries it in a skill's entry.
//
// The YAML is parsed by go.yaml.in/yaml/v3, the YAML organisation's
// maintained line of gopkg.in/yaml.v3; this package only walks the node
// tree it returns, so that every value has a JSON form a host's own YAML
// parser agrees with: timestamps stay the strings the author wrote
// (yaml.v3 would make a timestamp a time.Time), 017 is 17 as in YAML 1.2,
// mapping keys must be scalars whose text a host keeps, and aliases are
// expanded within a budget (no billion laughs). What YAML parsers read
// differently is refused: explicit tags other than !!str, !!map and
// !!seq, YAML 1.1 numbers (1_000, 0b101, -0x1F), U+0085, and a second
// document.
package skillmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
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
	// yaml.v3 reads U+0085 (NEL) as a line break, as YAML 1.1 did; a
	// host's YAML 1.2 parser reads it as a character.
	if bytes.Contains(block, []byte("\u0085")) {
		return Frontmatter{}, errors.New("frontmatter: U+0085 (NEL) is read as a line break by some YAML parsers and as a character by others; remove it")
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(block))
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) { // EOF: empty, refused below
		return Frontmatter{}, fmt.Errorf("frontmatter: %w", err)
	}
	// A second document (after "...") is one a host's parser refuses.
	if err := dec.Decode(new(yaml.Node)); !errors.Is(err, io.EOF) {
		return Frontmatter{}, errors.New("frontmatter: more than one YAML document")
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
	if t := n.ShortTag(); n.Kind != yaml.AliasNode && n.Style&yaml.TaggedStyle != 0 && t != "!!str" && t != "!!map" && t != "!!seq" {
		// !!binary, !!float 1, !!set, !cpp: hosts' parsers make other
		// values of them, or refuse them.
		return nil, fmt.Errorf("line %d: the tag %s is read differently by hosts' YAML parsers; write the value plainly", n.Line, n.Tag)
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
			if err := checkKey(k); err != nil {
				return nil, err
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
	if t := n.ShortTag(); (t == "!!int" || t == "!!float") && (strings.Contains(n.Value, "_") || yaml11Int.MatchString(n.Value)) {
		// 1_000, 0b101, -0x1F: numbers in YAML 1.1 (yaml.v3, js-yaml),
		// strings in the YAML 1.2 core schema (the yaml package).
		return nil, fmt.Errorf("line %d: %s is a number to some YAML parsers and a string to others; quote it", n.Line, n.Value)
	}
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
		if leadingZero.MatchString(n.Value) {
			// 017 is 17 in YAML 1.2 (a host's parser), 15 in yaml.v3's
			// YAML 1.1 reading.
			if i, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
				return i, nil
			}
		}
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
	if n.Style == 0 && n.ShortTag() == "!!str" && coreNumber.MatchString(n.Value) {
		// A number yaml.v3 could not hold (1e400): a host reads Infinity.
		return nil, fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
	}
	return n.Value, nil // !!str, !!timestamp, !!binary and local tags: as written
}

var (
	// yaml11Int is a binary or signed hexadecimal integer.
	yaml11Int = regexp.MustCompile(`^([-+]?0b|[-+]0x)`)
	// leadingZero is a decimal integer with a leading zero.
	leadingZero = regexp.MustCompile(`^[-+]?0[0-9]+$`)
	// coreNumber is a number of the YAML 1.2 core schema.
	coreNumber = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
)

// checkKey refuses a mapping key that a host's parser reads as another
// text than the one written: it makes a number, boolean or null of it
// and turns that into a string (1.0 is "1", 0x1F is "31", True is
// "true", ~ is "" or "null" as the parser has it). A string key, a
// decimal integer as JavaScript writes it, and true or false are kept.
func checkKey(k *yaml.Node) error {
	switch k.ShortTag() {
	case "!!str", "!!merge":
		return nil
	case "!!int":
		if i, err := strconv.ParseInt(k.Value, 10, 64); err == nil && strconv.FormatInt(i, 10) == k.Value && i > -1<<53 && i < 1<<53 {
			return nil
		}
	case "!!bool":
		if k.Value == "true" || k.Value == "false" {
			return nil
		}
	}
	return fmt.Errorf("line %d: the key %s is a %s in YAML, which hosts turn into another string; quote it", k.Line, k.Value, strings.TrimPrefix(k.ShortTag(), "!!"))
}
