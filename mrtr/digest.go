package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/baton-mcp/baton/internal/clip"
	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/jsonw"
)

// emptyArgs is the digest input for a request without arguments; absent,
// null and {} arguments are the same call.
var emptyArgs = []byte("{}")

// ArgumentsDigest returns the SHA-256 digest of the canonical form of a
// request's arguments, so that a retry whose arguments differ only in key
// order, whitespace or number spelling (1.0 and 1) has the same digest, and
// any other change has a different one. Absent and null arguments are
// treated as {}.
func ArgumentsDigest(args json.RawMessage) (Digest, error) {
	canon, err := Canonicalize(args)
	if err != nil {
		return Digest{}, err
	}
	return sha256.Sum256(canon), nil
}

// Canonicalize returns a canonical encoding of a JSON value: object keys
// sorted (duplicates are an error), no insignificant whitespace, strings
// re-escaped one way, integers in decimal without exponent, other numbers
// in the shortest float64 form. Absent, null and {} arguments are {}.
func Canonicalize(v json.RawMessage) ([]byte, error) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return emptyArgs, nil
	}
	if !json.Valid(t) {
		return nil, errors.New("canonicalize arguments: invalid JSON")
	}
	out, err := appendCanonical(make([]byte, 0, len(t)), t)
	if err != nil {
		return nil, fmt.Errorf("canonicalize arguments: %w", err)
	}
	if bytes.Equal(out, emptyArgs) {
		return emptyArgs, nil
	}
	return out, nil
}

// appendCanonical appends the canonical form of the valid JSON value raw.
func appendCanonical(dst, raw []byte) ([]byte, error) {
	switch raw[0] {
	case '{':
		members, err := jsonscan.SplitValidObject(raw, "object")
		if err != nil {
			return nil, err
		}
		slices.SortFunc(members, func(a, b jsonscan.Member) int { return strings.Compare(a.Key, b.Key) })
		dst = append(dst, '{')
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = jsonw.Key(dst, m.Key)
			if dst, err = appendCanonical(dst, m.Value); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case '[':
		elems, err := jsonscan.SplitValidArray(raw)
		if err != nil {
			return nil, err
		}
		dst = append(dst, '[')
		for i, e := range elems {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = appendCanonical(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case '"':
		s, err := jsonscan.Unquote(raw)
		if err != nil {
			return nil, err
		}
		return jsonw.String(dst, s), nil
	case 't', 'f', 'n':
		return append(dst, raw...), nil
	default:
		return appendCanonicalNumber(dst, string(raw))
	}
}

func appendCanonicalNumber(dst []byte, s string) ([]byte, error) {
	if isPlainInteger(s) {
		if s == "-0" {
			return append(dst, '0'), nil
		}
		return append(dst, s...), nil
	}
	// Exact integers of any size written otherwise (1.0, 1e3) print as
	// integers.
	if r, ok := new(big.Rat).SetString(s); ok && r.IsInt() {
		return r.Num().Append(dst, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s: %w", clip.Quote(s), err)
	}
	if f == math.Trunc(f) {
		// A non-integer literal that rounds to an integral float64 (like
		// 7.0000000000000000001e20) prints as that integer, so the
		// canonical form is a fixed point.
		i, _ := big.NewFloat(f).Int(nil)
		return i.Append(dst, 10), nil
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
}

// isPlainInteger reports whether s is -?(0|[1-9][0-9]*).
func isPlainInteger(s string) bool {
	if s != "" && s[0] == '-' {
		s = s[1:]
	}
	if s == "" || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
