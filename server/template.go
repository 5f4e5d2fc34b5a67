package server

import (
	"fmt"
	"net/url"
	"strings"
)

// uriTemplate is an RFC 6570 level-1 template: literal text and {name}
// expressions, each matching a non-empty run of characters other than '/',
// '?', '#' and '&'.
type uriTemplate struct {
	literals []string // len(vars)+1 literal pieces around the variables
	vars     []string
}

func parseURITemplate(t string) (*uriTemplate, error) {
	p := &uriTemplate{}
	rest := t
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, fmt.Errorf("URI template %q: unmatched '}'", t)
			}
			p.literals = append(p.literals, rest)
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("URI template %q: unmatched '{'", t)
		}
		name := rest[i+1 : i+j]
		if name == "" || strings.ContainsAny(name, "{+#./;?&=,!@|*: ") {
			return nil, fmt.Errorf("URI template %q: only simple {name} expressions are supported, got {%s}", t, name)
		}
		if len(p.vars) > 0 && i == 0 {
			return nil, fmt.Errorf("URI template %q: adjacent expressions are ambiguous", t)
		}
		p.literals = append(p.literals, rest[:i])
		p.vars = append(p.vars, name)
		rest = rest[i+j+1:]
	}
	return p, nil
}

// match returns the variables if uri matches the template.
func (p *uriTemplate) match(uri string) (map[string]string, bool) {
	if !strings.HasPrefix(uri, p.literals[0]) {
		return nil, false
	}
	rest := uri[len(p.literals[0]):]
	var vals map[string]string
	for i, name := range p.vars {
		next := p.literals[i+1]
		end := strings.IndexAny(rest, "/?#&")
		if end < 0 {
			end = len(rest)
		}
		var k int
		if next == "" {
			k = end
		} else {
			k = strings.Index(rest[:min(len(rest), end+len(next))], next)
			if k < 0 || k > end {
				return nil, false
			}
		}
		if k == 0 {
			return nil, false
		}
		v, err := url.PathUnescape(rest[:k])
		if err != nil {
			return nil, false
		}
		if vals == nil {
			vals = make(map[string]string, len(p.vars))
		}
		vals[name] = v
		rest = rest[k+len(next):]
	}
	if rest != "" {
		return nil, false
	}
	return vals, true
}
