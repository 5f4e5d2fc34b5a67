package server

import (
	"net/http"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// A client's answer to a server request of a 2025-11-25 session (the
// answer POST of a blocking elicitation round trip) is a JSON-RPC
// response, which went the general path: the limits pass and segmentio's
// decoder (rpcwire.Decode), about 5,400 instructions of the round trip's
// 118,000 in BenchmarkLegacyElicitInProcess (bench; callgrind, issue 23).
// The usual one, a success response {"jsonrpc":"2.0","id":…,"result":{…}},
// is decoded instead by decodeLegacy's walk (envWalk), which bounds the
// body with the server's limits: the walk reads "jsonrpc" and "id" as it
// does for a request, and legacyAnswer goes on from the "result" (the id
// is decoded once; it was decoded twice, about 600 instructions and an
// allocation, when the answer had a walk of its own). Anything else goes
// the general path, which decides it exactly as before: an error
// response, a result that is not an object, an id that is neither a
// string nor a number, a duplicate or unknown member, a key or "jsonrpc"
// with an escape, a batch, a body over a limit, trailing data.
// FuzzLegacyAnswer holds it to rpcwire.Decode's result on every body it
// takes.

// legacyAnswer decodes the rest of a success response from its "result"
// member's value at w.i, the members before it ("jsonrpc" and "id" only)
// having been read into mask (bits 0 and 1), id and jsonrpcOK. It returns
// the message rpcwire.Decode would give the legacy adapter, its result
// sharing the body's memory as Decode's does, or nil for the general
// path.
func (w *envWalk) legacyAnswer(mask uint32, id mcp.ID, jsonrpcOK bool) *rpcwire.Message {
	if w.i >= len(w.b) || w.b[w.i] != '{' {
		return nil
	}
	result := w.raw()
	first := false
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
		default: // result again, method, params, error, or a member the general path ignores
			w.bad = true
		}
	}
	if w.bad || jsonscan.SkipSpace(w.b, w.i) != len(w.b) || !jsonrpcOK || id.IsZero() || result == nil {
		return nil
	}
	return &rpcwire.Message{JSONRPC: rpcwire.Version, ID: id, Result: result}
}

// serveLegacyAnswer serves a POST that carries a session id, when its body
// is an answer decodeLegacy took (msg): it goes to the legacy adapter as
// the general path would send it (a response is a legacy session's, and
// authorizeMessage lets every response through).
func (s *Server) serveLegacyAnswer(w http.ResponseWriter, r *http.Request, body []byte, msg *rpcwire.Message) {
	s.legacy.ServeLegacy(w, r, body, msg)
}
