package round

import (
	"fmt"

	"github.com/baton-mcp/baton/internal/jsonw"
	"github.com/baton-mcp/baton/mrtr"
)

// Keyed is an input request under the key the server chose for it.
type Keyed struct {
	// Key is its key in inputRequests, and the key the client answers
	// under in inputResponses.
	Key string
	// Request is the request itself, sent as {"method": ..., "params":
	// ...}.
	Request mrtr.InputRequest
}

// Requests is the inputRequests map of an input_required result, kept
// in the order the handler asked.
type Requests []Keyed

// MarshalJSON writes the requests as a JSON object in order.
func (rs Requests) MarshalJSON() ([]byte, error) { return rs.AppendJSON(nil) }

// AppendJSON appends the requests as a JSON object, in order, to dst.
func (rs Requests) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	for i, kr := range rs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = jsonw.Key(dst, kr.Key)
		var err error
		if dst, err = kr.Request.AppendJSON(dst); err != nil {
			return nil, fmt.Errorf("input request %q: %w", kr.Key, err)
		}
	}
	return append(dst, '}'), nil
}
