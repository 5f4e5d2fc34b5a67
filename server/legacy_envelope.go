package server

import (
	"net/http"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
)

// A request of a 2025-11-25 session (a POST with Mcp-Session-Id) took three
// decodings of its params on the general path: rpcwire.Decode for the
// message, authorizeMessage for the name it checks, and the legacy
// dispatch for paramsIn; with the limits pre-scan they were about a third
// of the server's instructions for a plain tools/call in a session (issue
// 23). The ordinary ones are now decoded once, in one pass over the body,
// by decodeLegacy below (with the envelope's walker, envWalk), and the
// dispatch reads that decoding. Anything it does not take goes the
// general path, which gives it its exact result and errors;
// FuzzLegacyEnvelope holds it to the general path's result on every body
// it takes.

// legacyEnvelope is a legacy session's request decoded in one pass: the
// message the legacy adapter reads and the request the dispatch reads (its
// params pointing into store), in one allocation.
type legacyEnvelope struct {
	request
	store envelopeStore
	msg   rpcwire.Message
}

// decodeLegacy decodes body, an ordinary request of a legacy session: a
// request with an id, a method whose params paramsIn describes (onePass),
// and params that are an object or absent. It returns what rpcwire.Decode
// would give the legacy adapter (msg) and what the legacy dispatch would
// decode from its params (the request's p), or reports false for the
// general path. The body's limits must have been checked
// (rpcwire.CheckLimits) first.
func decodeLegacy(body []byte) (*legacyEnvelope, bool) {
	w := &envWalk{b: body}
	if !w.open() {
		return nil, false
	}
	e := &legacyEnvelope{}
	r, st := &e.request, &e.store
	var (
		mask      uint32
		jsonrpcOK bool
		params    []byte
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
			if w.seen(&mask, 1) || w.i >= len(w.b) || w.b[w.i] != '"' && w.b[w.i] != '-' && (w.b[w.i] < '0' || w.b[w.i] > '9') {
				w.bad = true
				break
			}
			if v := w.raw(); !w.bad && r.id.UnmarshalJSON(v) != nil {
				w.bad = true
			}
		case "method":
			if !w.seen(&mask, 2) {
				r.method = w.str()
			}
		case "params":
			if !w.seen(&mask, 3) {
				start := w.i
				w.params(&r.p, st)
				params = body[start:w.i]
			}
		case "result", "error":
			w.bad = true
		default:
			w.skip()
		}
	}
	if w.bad || jsonscan.SkipSpace(body, w.i) != len(body) || !jsonrpcOK || r.id.IsZero() ||
		r.method == "" || r.method == "initialize" || !onePass(r.method) {
		return nil, false
	}
	e.msg = rpcwire.Message{JSONRPC: rpcwire.Version, ID: r.id, Method: r.method, Params: params}
	return e, true
}

// serveLegacyDecoded serves a POST that carries a session id, when its
// body is a request decodeLegacy takes: the call is authorized from the
// decoded name (as authorizeMessage does from the params) and handed to
// the legacy adapter with its decoding. It reports false, having written
// nothing, for the general path.
func (s *Server) serveLegacyDecoded(w http.ResponseWriter, r *http.Request, body []byte) bool {
	if rpcwire.CheckLimits(body, s.jsonLimits()) != nil {
		return false // the general path answers it
	}
	e, ok := decodeLegacy(body)
	if !ok {
		return false
	}
	switch e.method {
	case "tools/call", "prompts/get", "resources/read":
		target := e.p.Name
		if e.method == "resources/read" {
			target = e.p.URI
		}
		var name string
		if target != nil {
			name = *target
		}
		if _, ref := s.authorize(r.Context(), e.method, name); ref != nil {
			writeRefusal(w, e.id, ref)
			return true
		}
	}
	s.legacy.ServeLegacyDecoded(w, r, body, &e.msg, &e.request)
	return true
}
