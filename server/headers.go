package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// The MCP HTTP headers.
const (
	headerProtocolVersion = rpcwire.HeaderProtocolVersion
	headerMethod          = rpcwire.HeaderMethod
	headerName            = rpcwire.HeaderName
	headerParamPrefix     = rpcwire.HeaderParamPrefix
	headerSessionID       = rpcwire.HeaderSessionID
)

// paramHeader is a tool argument mirrored into an Mcp-Param-{Name} header
// because its schema carries "x-mcp-header".
type paramHeader struct {
	arg    string // property name in the arguments
	header string // canonical header name
	typ    string // string, integer, number or boolean
}

// paramHeaders finds the x-mcp-header annotations among the top-level
// properties of an input schema.
func paramHeaders(schema json.RawMessage) ([]paramHeader, error) {
	var s struct {
		Properties map[string]struct {
			Header *string `json:"x-mcp-header"`
			Type   any     `json:"type"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, nil // not an object schema with properties: nothing mirrored
	}
	var out []paramHeader
	seen := map[string]string{}
	for arg, p := range s.Properties {
		if p.Header == nil {
			continue
		}
		name := *p.Header
		if name == "" || !validTokenName(name) {
			return nil, fmt.Errorf("property %q: x-mcp-header %q is not a valid header name suffix", arg, name)
		}
		typ, _ := p.Type.(string)
		switch typ {
		case "string", "integer", "number", "boolean":
		default:
			return nil, fmt.Errorf("property %q: x-mcp-header needs a primitive string, integer, number or boolean type", arg)
		}
		h := http.CanonicalHeaderKey(headerParamPrefix + name)
		if other, dup := seen[h]; dup {
			return nil, fmt.Errorf("properties %q and %q both map to header %s", other, arg, h)
		}
		seen[h] = arg
		out = append(out, paramHeader{arg: arg, header: h, typ: typ})
	}
	return out, nil
}

func validTokenName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// protocolVersionKey is headerProtocolVersion as net/http files it
// (canonical form). Looking a header up by a name not in that form
// canonicalises it first, which allocates: once per request.
var protocolVersionKey = http.CanonicalHeaderKey(headerProtocolVersion)

// headerValue returns the trimmed value of a header and whether it was
// present. A value in the =?base64?…?= form is decoded; a malformed
// encoding or a control character is an error. name is headerProtocolVersion
// or a name in canonical form (headerMethod, headerName, a paramHeader's
// header): it is looked up as it is.
//
// The map is indexed directly rather than through Header.Values, which
// canonicalises the key on every call: under valgrind (BenchmarkToolsCall,
// issue 23) net/textproto.CanonicalMIMEHeaderKey was the largest single
// function of a plain call's own instructions, about 3,500 of ServeHTTP's
// 29,000 per request, most of it for the five headerValue calls and the
// Header.Get calls of ServeHTTP (see headerGet).
func headerValue(h http.Header, name string) (string, bool, error) {
	key := name
	if name == headerProtocolVersion {
		key = protocolVersionKey // not canonical as spelled
	}
	vs := h[key]
	if len(vs) == 0 {
		return "", false, nil
	}
	if len(vs) > 1 {
		return "", true, fmt.Errorf("header %s appears more than once", name)
	}
	// Trimmed by hand: strings.Trim with a two-byte cutset builds its
	// byte set on every call, about 80 instructions of each of the three
	// lookups of every request (valgrind, BenchmarkToolsCall, issue 23).
	v := vs[0]
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	if !controlFree(v) {
		return "", true, fmt.Errorf("header %s contains a control character", name)
	}
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		enc := v[len("=?base64?") : len(v)-len("?=")]
		dec, err := base64.StdEncoding.Strict().DecodeString(enc)
		if err != nil {
			return "", true, fmt.Errorf("header %s: invalid base64 value: %v", name, err)
		}
		return string(dec), true, nil
	}
	return v, true, nil
}

// controlFree reports whether s has no control character that a header
// value may not carry: a byte below 0x20 other than tab, or 0x7f. It reads
// eight bytes at a time, the last word overlapping the one before it (a
// value of four to seven bytes is read as its first and last four):
// byte by byte the check cost about 220 instructions of a modern
// request's three header values, about 9 a byte (valgrind,
// BenchmarkToolsCall, issue 23). FuzzControlFree holds it to the byte
// loop.
func controlFree(s string) bool {
	n := len(s)
	switch {
	case n >= 8:
		for i := 0; i < n-8; i += 8 {
			if controlBytes(leUint64(s[i:])) != 0 {
				return false
			}
		}
		return controlBytes(leUint64(s[n-8:])) == 0
	case n >= 4:
		// The first four bytes and the last four, which may overlap.
		return controlBytes(uint64(leUint32(s))|uint64(leUint32(s[n-4:]))<<32) == 0
	}
	for i := 0; i < n; i++ {
		if c := s[i]; c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// controlBytes sets bit 7 of each byte of v that is a control character
// (below 0x20 but tab, or 0x7f) and clears every other bit. The sums are
// taken over the low seven bits of each byte, which carry into bit 7 and
// never across bytes: x+0x60 reaches bit 7 when x >= 0x20, (x^c)+0x7f when
// x != c; a byte of 0x80 and above is no control character (&^v).
func controlBytes(v uint64) uint64 {
	const lows, highs = 0x0101010101010101, 0x8080808080808080
	v7 := v &^ highs
	printable := v7 + lows*0x60            // >= 0x20
	notTab := (v7 ^ lows*'\t') + lows*0x7f // != tab
	notDel := (v7 ^ lows*0x7f) + lows*0x7f // != 0x7f
	return (^printable&notTab | ^notDel) &^ v & highs
}

// leUint32 reads the first four bytes of s, little-endian.
func leUint32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
}

// leUint64 reads the first eight bytes of s, little-endian.
func leUint64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// headerGet is h.Get(key) for a key in canonical form, without
// canonicalising it again on every request (see headerValue).
func headerGet(h http.Header, key string) string {
	if vs := h[key]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

func headerMismatch(format string, args ...any) *mcp.Error {
	return &mcp.Error{Code: mcp.HeaderMismatch, Message: "Header mismatch: " + fmt.Sprintf(format, args...)}
}

// nameSource says what Mcp-Name carries for method.
func nameSource(method string) string {
	switch method {
	case "tools/call", "prompts/get":
		return "params.name"
	case "resources/read":
		return "params.uri"
	case "tasks/get", "tasks/update", "tasks/cancel":
		return "the task id (params.taskId)"
	}
	return "the request's target"
}

// headerRead is one headerValue result.
type headerRead struct {
	v   string
	ok  bool
	err error
}

// callHeaders are a request's Mcp-Method and Mcp-Name, read once: both
// authorizeHeaders (before the body) and checkStandardHeaders (after it)
// compare them, and each read cost about 250 instructions of a plain
// call's 23,000 in ServeHTTP (valgrind, BenchmarkToolsCall, issue 23).
// They are read when first needed (load), so a request that needs neither
// (a 2025-11-25 session's POST on a server with nothing to authorize)
// never looks them up: two misses in the header map, about 300
// instructions of such a request over HTTP.
type callHeaders struct {
	h            http.Header
	read         bool
	method, name headerRead
}

// load reads Mcp-Method and Mcp-Name, the first time it is called.
func (c *callHeaders) load() {
	if c.read {
		return
	}
	c.read = true
	c.method.v, c.method.ok, c.method.err = headerValue(c.h, headerMethod)
	c.name.v, c.name.ok, c.name.err = headerValue(c.h, headerName)
}

// checkStandardHeaders compares MCP-Protocol-Version, and Mcp-Method and
// Mcp-Name (hs), with the body.
func checkStandardHeaders(h http.Header, hs *callHeaders, method, version, name string, hasName bool) *mcp.Error {
	hs.load()
	pv, ok, err := headerValue(h, headerProtocolVersion)
	switch {
	case err != nil:
		return headerMismatch("%v", err)
	case !ok:
		return headerMismatch("the %s header is required", headerProtocolVersion)
	case pv != version:
		return headerMismatch("%s is %s but _meta declares %s", headerProtocolVersion, clip.Quote(pv), clip.Quote(version))
	}
	mv, ok, err := hs.method.v, hs.method.ok, hs.method.err
	switch {
	case err != nil:
		return headerMismatch("%v", err)
	case !ok:
		return headerMismatch("the %s header is required", headerMethod)
	case mv != method:
		return headerMismatch("%s is %s but the body's method is %s", headerMethod, clip.Quote(mv), clip.Quote(method))
	}
	nv, ok, err := hs.name.v, hs.name.ok, hs.name.err
	switch {
	case err != nil:
		return headerMismatch("%v", err)
	case hasName && !ok:
		return headerMismatch("the %s header is required for %s: set it to %s", headerName, method, nameSource(method))
	case hasName && nv != name:
		return headerMismatch("%s is %s but the body names %s; set it to %s", headerName, clip.Quote(nv), clip.Quote(name), nameSource(method))
	case !hasName && ok:
		return headerMismatch("%s is not expected for %s", headerName, method)
	}
	return nil
}

// checkParamHeaders compares each Mcp-Param header a tool declares with
// the argument it mirrors.
func checkParamHeaders(h http.Header, params []paramHeader, args map[string]json.RawMessage) *mcp.Error {
	for _, p := range params {
		hv, present, err := headerValue(h, p.header)
		if err != nil {
			return headerMismatch("%v", err)
		}
		raw, inBody := args[p.arg]
		if inBody && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			inBody = false
		}
		switch {
		case !inBody && !present:
			continue
		case !inBody && present:
			return headerMismatch("%s is set but argument %q is absent", p.header, p.arg)
		case inBody && !present:
			return headerMismatch("argument %q requires the %s header", p.arg, p.header)
		}
		if !paramMatches(p.typ, raw, hv) {
			return headerMismatch("%s does not match argument %q", p.header, p.arg)
		}
	}
	return nil
}

func paramMatches(typ string, raw json.RawMessage, hv string) bool {
	switch typ {
	case "string":
		var s string
		return json.Unmarshal(raw, &s) == nil && s == hv
	case "boolean":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return false
		}
		return (b && hv == "true") || (!b && hv == "false")
	default: // integer, number: compare numerically
		// Exact, and linear in the length of both: no big-number arithmetic
		// on a header value, which arrives before anything is verified.
		a, err1 := jsonscan.AppendNumber(nil, bytes.TrimSpace(raw))
		b, err2 := jsonscan.AppendNumber(nil, hv)
		return err1 == nil && err2 == nil && bytes.Equal(a, b)
	}
}
