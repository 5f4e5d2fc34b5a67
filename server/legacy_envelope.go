package server

import (
	"net/http"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// A request of a 2025-11-25 session (a POST with Mcp-Session-Id) took three
// decodings of its params on the general path: rpcwire.Decode for the
// message, authorizeMessage for the name it checks, and the legacy
// dispatch for paramsIn; with the limits pre-scan they were about a third
// of the server's instructions for a plain tools/call in a session (issue
// 23). The ordinary ones are now decoded once, in one pass over the body,
// by decodeLegacy below, and the dispatch reads that decoding. It is the
// modern envelope's decoder (envelope.go: the frame, params and _meta
// walks of envWalk), given the legacy stores, which make it give up on
// the members of the modern protocol, and a client's answer at "result". Anything it does not take goes the
// general path, which gives it its exact result and errors;
// FuzzLegacyEnvelope holds it to the general path's result on every body
// it takes.

// legacyEnvelope is a legacy session's request decoded in one pass: the
// message the legacy adapter reads and the request the dispatch reads (its
// params pointing into store), in one allocation. A call parked on its
// client keeps it, so it holds only what a legacy request's params carry
// (legacyStore), not the modern envelope's capabilities and client info.
type legacyEnvelope struct {
	request
	store legacyStore
	msg   rpcwire.Message
}

// legacyStore is what decodeLegacy points a request's params at: the
// strings of params it reads (the first legacyParamStrings of the modern
// envelope's). _meta, which a plain call does not carry, has a
// legacyMetaStore of its own: without it the envelope fits a smaller size
// class (768 bytes now, with request.resp; less to allocate, and so to
// collect, on every request of a session; issue 23).
type legacyStore struct {
	strs [legacyParamStrings]string
}

// legacyMetaStore is what decodeLegacy points a request's _meta at: _meta
// and the strings of it that it reads (the trace context).
type legacyMetaStore struct {
	meta metaIn
	strs [legacyMetaStrings]string
}

// decodeLegacy decodes body, an ordinary request of a legacy session: a
// request with an id, a method whose params paramsIn describes (onePass),
// and params that are an object or absent. It returns what rpcwire.Decode
// would give the legacy adapter (msg) and what the legacy dispatch would
// decode from its params (the request's p), or reports false for the
// general path. The walk bounds the body as rpcwire.CheckLimits would
// (lim, as decodeEnvelope does): a body over a limit is left to the
// general path, which answers it with CheckLimits's error.
//
// A client's answer to a server request (a success response) is given up
// on at its "result" as a request, and decoded from there as an answer
// (legacyAnswer, legacy_answer.go), when only "jsonrpc" and "id" came
// before it: ans is then the message rpcwire.Decode would give the legacy
// adapter, and e is nil. The id is decoded once, by this walk, for both.
func decodeLegacy(body []byte, lim *jsonscan.Limits) (e *legacyEnvelope, ans *rpcwire.Message, ok bool) {
	w := &envWalk{b: body, lim: *lim}
	if !w.open() {
		return nil, nil, false
	}
	// The envelope is allocated when params come (or at the end): a
	// client's answer to a server request, the other usual POST of a
	// session, turns into an answer at its "result" before that.
	var (
		id       mcp.ID
		f        frameWalk
		params   []byte
		answered bool
	)
	w.frame(&f, &id, func() {
		e = &legacyEnvelope{}
		start := w.i
		w.params(&e.p, e.store.strs[:], func() (*metaIn, []string, *envelopeStore) {
			ms := &legacyMetaStore{}
			return &ms.meta, ms.strs[:], nil
		})
		params = body[start:w.i]
	}, func(mask uint32, jsonrpcOK bool) bool {
		if mask&^(1<<0|1<<1) != 0 { // method, params or another member came first
			w.bad = true
			return true
		}
		answered = true
		ans = w.legacyAnswer(mask, id, jsonrpcOK)
		return true
	})
	if answered {
		return nil, ans, ans != nil
	}
	if !f.ok(w, body, id) {
		return nil, nil, false
	}
	if e == nil { // no params
		e = &legacyEnvelope{}
	}
	e.id, e.method = id, f.method
	e.msg = rpcwire.Message{JSONRPC: rpcwire.Version, ID: id, Method: f.method, Params: params}
	return e, nil, true
}

// serveLegacyDecoded serves a POST that carries a session id, when its
// body is a request decodeLegacy takes: the call is authorized from the
// decoded name (as authorizeMessage does from the params) and handed to
// the legacy adapter with its decoding; a client's answer to a server
// request (decoded by the same walk) goes to serveLegacyAnswer. It reports false, having written
// nothing, for the general path.
func (s *Server) serveLegacyDecoded(w http.ResponseWriter, r *http.Request, body []byte) bool {
	lim := envLimits(s.jsonLimits())
	e, ans, ok := decodeLegacy(body, &lim)
	if !ok {
		return false
	}
	if ans != nil { // a client's answer: legacy_answer.go
		s.serveLegacyAnswer(w, r, body, ans)
		return true
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
