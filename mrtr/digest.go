package mrtr

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
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
// sorted, no insignificant whitespace, integers in decimal without
// exponent, other numbers in the shortest float64 form.
func Canonicalize(v json.RawMessage) ([]byte, error) {
	t := bytes.TrimSpace(v)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return emptyArgs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("canonicalize arguments: %w", err)
	}
	if m, ok := x.(map[string]any); ok && len(m) == 0 {
		return emptyArgs, nil
	}
	return appendCanonical(nil, x)
}

func appendCanonical(dst []byte, x any) ([]byte, error) {
	switch v := x.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case string:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		return append(dst, b...), nil
	case json.Number:
		return appendCanonicalNumber(dst, v)
	case []any:
		dst = append(dst, '[')
		for i, e := range v {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendCanonical(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			kb, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			dst = append(dst, kb...)
			dst = append(dst, ':')
			if dst, err = appendCanonical(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	default:
		return nil, fmt.Errorf("canonicalize: unexpected %T", x)
	}
}

func appendCanonicalNumber(dst []byte, n json.Number) ([]byte, error) {
	s := n.String()
	// Exact integers of any size, including 1.0 and 1e3, print as integers.
	if r, ok := new(big.Rat).SetString(s); ok && r.IsInt() {
		return r.Num().Append(dst, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("canonicalize number %q: %w", s, err)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64), nil
}
