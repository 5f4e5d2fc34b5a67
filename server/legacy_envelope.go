package server

import (
	"net/http"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/jsonrpc"
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
// params pointing into store), in one allocation. A call parked on its
// client keeps it, so it holds only what a legacy request's params carry
// (legacyStore), not the modern envelope's capabilities and client info.
type legacyEnvelope struct {
	request
	store legacyStore
	msg   rpcwire.Message
}

// legacyStore is what decodeLegacy points a request's params at: the
// strings of params it reads. _meta, which a plain call does not carry,
// has a legacyMetaStore of its own: without it the envelope fits a
// smaller size class (768 bytes now, with request.resp; less to allocate,
// and so to collect, on every request of a session; issue 23).
type legacyStore struct {
	strs [legacyStrings]string
}

// legacyMetaStore is what decodeLegacy points a request's _meta at: _meta
// and the strings of it that it reads.
type legacyMetaStore struct {
	meta metaIn
	strs [legacyMetaStrings]string
}

// The strings of legacyStore.strs.
const (
	legacyName = iota
	legacyURI
	legacyCursor
	legacyStrings
)

// The strings of legacyMetaStore.strs.
const (
	legacyTraceparent = iota
	legacyTracestate
	legacyBaggage
	legacyMetaStrings
)

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
		id        jsonrpc.ID
		method    string
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
			w.idField(&mask, 1, &id)
		case "method":
			if !w.seen(&mask, 2) {
				method = w.str()
			}
		case "params":
			if !w.seen(&mask, 3) {
				e = &legacyEnvelope{}
				start := w.i
				w.legacyParams(&e.p, &e.store)
				params = body[start:w.i]
			}
		case "result":
			if mask&^(1<<0|1<<1) != 0 { // method, params or another member came first
				w.bad = true
				break
			}
			ans = w.legacyAnswer(mask, id, jsonrpcOK)
			return nil, ans, ans != nil
		case "error":
			w.bad = true
		default:
			mask |= 1 << 4 // an answer has no other member
			w.skip()
		}
	}
	if w.bad || jsonscan.SkipSpace(body, w.i) != len(body) || !jsonrpcOK || id.IsZero() ||
		method == "" || method == "initialize" || !onePass(method) {
		return nil, nil, false
	}
	if e == nil { // no params
		e = &legacyEnvelope{}
	}
	e.id, e.method = id, method
	e.msg = rpcwire.Message{JSONRPC: rpcwire.Version, ID: id, Method: method, Params: params}
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

// legacyParams decodes the params object at w.i into p, as envWalk.params
// does, for the members a legacy session's requests carry: name, uri,
// cursor, arguments and _meta (legacyMeta). It gives up on the members of
// the modern protocol (requestState, inputResponses, taskId) and of
// completion/complete and subscriptions/listen, which the general path
// decodes.
func (w *envWalk) legacyParams(p *paramsIn, st *legacyStore) {
	if !w.open() {
		return
	}
	var mask uint32
	first := true
	for !w.bad {
		key, ok := w.member(&first)
		if !ok {
			return
		}
		switch string(key) {
		case "name":
			w.strField(&mask, 0, &st.strs[legacyName], &p.Name)
		case "uri":
			w.strField(&mask, 1, &st.strs[legacyURI], &p.URI)
		case "cursor":
			w.strField(&mask, 2, &st.strs[legacyCursor], &p.Cursor)
		case "arguments":
			if !w.seen(&mask, 3) {
				p.Arguments = w.raw()
			}
		case "_meta":
			if !w.seen(&mask, 4) {
				ms := &legacyMetaStore{}
				p.Meta = &ms.meta
				w.legacyMeta(ms)
			}
		case "requestState", "inputResponses", "taskId", "ref", "argument", "context", "notifications":
			w.bad = true
		default:
			w.skip()
		}
	}
}

// legacyMeta decodes the _meta object at w.i into st.meta: a progress
// token and the trace context. It gives up on the modern envelope's
// members.
func (w *envWalk) legacyMeta(st *legacyMetaStore) {
	m := &st.meta
	if !w.open() {
		return
	}
	var mask uint32
	first := true
	for !w.bad {
		key, ok := w.member(&first)
		if !ok {
			return
		}
		switch string(key) {
		case "progressToken":
			if !w.seen(&mask, 0) {
				m.ProgressToken = w.raw()
			}
		case "traceparent":
			w.strField(&mask, 1, &st.strs[legacyTraceparent], &m.Traceparent)
		case "tracestate":
			w.strField(&mask, 2, &st.strs[legacyTracestate], &m.Tracestate)
		case "baggage":
			w.strField(&mask, 3, &st.strs[legacyBaggage], &m.Baggage)
		case metaProtocolVersion, metaClientCaps, "io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/logLevel":
			w.bad = true
		default:
			w.skip()
		}
	}
}
