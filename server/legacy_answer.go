package server

import (
	"net/http"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/jsonrpc"
)

// A client's answer to a server request of a 2025-11-25 session (the
// answer POST of a blocking elicitation round trip) is a JSON-RPC
// response, which decodeLegacy leaves to the general path: the limits
// pass and segmentio's decoder (rpcwire.Decode), about 5,400 instructions
// of the round trip's 118,000 in BenchmarkLegacyElicitInProcess (bench;
// callgrind, issue 23). The usual one, a success response
// {"jsonrpc":"2.0","id":…,"result":{…}}, is decoded here instead, by
// decodeLegacyAnswer in one pass with the envelope's walker (envWalk),
// which bounds the body with the server's limits as decodeLegacy does.
// Anything else goes the general path, which decides it exactly as
// before: an error response, a result that is not an object, an id that
// is neither a string nor a number, a duplicate or unknown member, a key
// or "jsonrpc" with an escape, a batch, a body over a limit, trailing
// data. FuzzLegacyAnswer holds it to rpcwire.Decode's result on every
// body it takes.

// decodeLegacyAnswer decodes body, a success response, into the message
// rpcwire.Decode would give the legacy adapter, its result sharing the
// body's memory as Decode's does; it reports false for the general path.
// The walk bounds the body as rpcwire.CheckLimits would (lim, see
// envWalk): a body over a limit is left to the general path.
func decodeLegacyAnswer(body []byte, lim *jsonscan.Limits) (*rpcwire.Message, bool) {
	w := &envWalk{b: body, lim: *lim}
	if !w.open() {
		return nil, false
	}
	var (
		id        jsonrpc.ID
		result    []byte
		mask      uint32
		jsonrpcOK bool
		first     = true
	)
	for !w.bad {
		key, ok := w.member(&first)
		if !ok {
			break
		}
		switch string(key) {
		case "jsonrpc":
			if !w.seen(&mask, 0) {
				jsonrpcOK = w.str() == rpcwire.Version
			}
		case "id":
			w.idField(&mask, 1, &id)
		case "result":
			if w.seen(&mask, 2) || w.i >= len(w.b) || w.b[w.i] != '{' {
				w.bad = true
				break
			}
			result = w.raw()
		default: // method, params, error, or a member the general path ignores
			w.bad = true
		}
	}
	if w.bad || jsonscan.SkipSpace(body, w.i) != len(body) || !jsonrpcOK || id.IsZero() || result == nil {
		return nil, false
	}
	return &rpcwire.Message{JSONRPC: rpcwire.Version, ID: id, Result: result}, true
}

// serveLegacyAnswer serves a POST that carries a session id, when its body
// is an answer decodeLegacyAnswer takes: it goes to the legacy adapter as
// the general path would send it (a response is a legacy session's, and
// authorizeMessage lets every response through). It reports false, having
// written nothing, for the general path.
func (s *Server) serveLegacyAnswer(w http.ResponseWriter, r *http.Request, body []byte, lim *jsonscan.Limits) bool {
	msg, ok := decodeLegacyAnswer(body, lim)
	if !ok {
		return false
	}
	s.legacy.ServeLegacy(w, r, body, msg)
	return true
}
