package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/baton-mcp/baton/internal/jsonscan"
)

// decodeValue decodes a content value: strings, numbers (as json.Number),
// booleans, null and arrays, without a reflection-driven decoder for the
// common scalar cases.
func decodeValue(raw []byte) (any, error) {
	switch raw[0] {
	case '"':
		return jsonscan.Unquote(raw)
	case 't':
		return true, nil
	case 'f':
		return false, nil
	case 'n':
		return nil, nil
	case '[', '{':
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return v, nil
	default:
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				return json.Number(raw), nil // reported as out of range by checkValue
			}
			return nil, err
		}
		return json.Number(raw), nil
	}
}
