package server

import (
	"bytes"
	"encoding/json"
	"iter"
	"unicode/utf8"
	"unsafe"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/mcp"
)

// The request envelope (the JSON-RPC frame, params and _meta) of the usual
// request is read by hand, in one pass over the body, by decodeEnvelope
// below (and, with the same walks, decodeLegacy for a legacy session's
// request, legacy_envelope.go); anything it does not take falls back to the
// library decoder (decodeModernLib), which gives it its exact result and
// errors.
//
// Why by hand: with segmentio's decoder (through strictjson), decoding the
// envelope was the largest single step of a request's own work. Issue 23's
// profile of a two-round MRTR flow in process (BenchmarkMRTRTwoRounds,
// bench/steps.sh): the envelope 6.7 µs and 20 allocations of a flow's 37
// µs and 147 allocations in ServeHTTP, 16% of ServeHTTP's CPU samples in a
// CPU profile, most of it reflect.New for the pointer fields of
// paramsIn/metaIn/mcp.ClientCapabilities (8 per request) and the decoder's
// per-field dispatch. Here the pointer fields point into one envelopeStore
// allocated with the request, so the envelope costs the request and its
// id's copy.
//
// What decodeEnvelope takes is checked as strictly as the library checks
// it (jsonscan.SkipValue validates every value it skips or keeps raw), and
// FuzzEnvelope holds it to the library's result on every body it takes.
// It gives up (and the library decides) on anything out of the ordinary:
// a duplicate key, a key or a string it must decode that holds an escape
// or invalid UTF-8, a null where it expects a value, an id that is
// neither a string nor a number, result or error members, the params of
// completion/complete and subscriptions/listen (ref, argument, context,
// notifications) and clientInfo's icons. Keys match exactly, as with
// strictjson; other keys are checked and ignored.

// envelopeStore is what decodeEnvelope points a request's decoded params
// at: one allocation with the request instead of one per pointer field.
type envelopeStore struct {
	meta  metaIn
	caps  mcp.ClientCapabilities
	elic  mcp.ElicitationCapability
	samp  mcp.SamplingCapability
	roots mcp.RootsCapability
	info  mcp.Implementation
	strs  [paramStrings]string
	mstrs [metaStrings]string
}

// The strings of params, by index into the slice the walk is given: a
// legacy request's have only the first legacyParamStrings (legacyStore).
const (
	strName = iota
	strURI
	strCursor
	legacyParamStrings
	strRequestState = iota - 1
	strTaskID
	paramStrings
)

// The strings of _meta, likewise: a legacy request's have only the trace
// context (legacyMetaStore).
const (
	strTraceparent = iota
	strTracestate
	strBaggage
	legacyMetaStrings
	strProtocolVersion = iota - 1
	strLogLevel
	metaStrings
)

// envWalk walks a body. bad is set when decodeEnvelope must give up.
//
// It also bounds the body as rpcwire.CheckLimits would (lim): the nesting
// of the objects it walks (depth) and of the values it skips, the members
// of each object (members, per open object), and number literals. A body
// over a limit is given up like any other the walk does not take, and the
// general path answers it with CheckLimits's error; so a body the walk
// takes has been bounded, and needs no separate limits pass (see
// jsonscan.SkipValueWithin for the profile figure). Cost before trust
// holds as before: the walk is itself one linear pass that only slices
// the body and fills a fixed-size request, so nothing that costs more
// than reading the body runs before the whole body is known to be within
// the limits.
type envWalk struct {
	b       []byte
	i       int
	bad     bool
	lim     jsonscan.Limits // by value: a pointer would escape with the body
	depth   int             // objects open around w.i
	members [8]int          // members read so far in each open object
}

// open expects an object at w.i.
func (w *envWalk) open() bool {
	w.i = jsonscan.SkipSpace(w.b, w.i)
	if w.i < len(w.b) && w.b[w.i] == '{' && w.depth < w.lim.MaxDepth && w.depth < len(w.members) {
		w.i++
		w.members[w.depth] = 0
		w.depth++
		return true
	}
	w.bad = true
	return false
}

// member moves to the next member of the object being walked (*first: none
// read yet) and returns its key, w.i at its value. It returns false at the
// object's end (w.i past '}') or when the text is not what it takes
// (w.bad): a malformed object, or a key with an escape.
func (w *envWalk) member(first *bool) ([]byte, bool) {
	b := w.b
	i := jsonscan.SkipSpace(b, w.i)
	if i >= len(b) {
		w.bad = true
		return nil, false
	}
	if b[i] == '}' {
		w.i = i + 1
		w.depth--
		return nil, false
	}
	if n := &w.members[w.depth-1]; *n < w.lim.MaxMembers {
		*n++
	} else {
		w.bad = true
		return nil, false
	}
	if !*first {
		if b[i] != ',' {
			w.bad = true
			return nil, false
		}
		i = jsonscan.SkipSpace(b, i+1)
	}
	*first = false
	if i >= len(b) || b[i] != '"' {
		w.bad = true
		return nil, false
	}
	end, plain := jsonscan.ScanString(b, i)
	if end < 0 || !plain {
		w.bad = true
		return nil, false
	}
	key := b[i+1 : end-1]
	i = jsonscan.SkipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		w.bad = true
		return nil, false
	}
	w.i = jsonscan.SkipSpace(b, i+1)
	return key, true
}

// keys yields the keys of the object at w.i, w.i at each one's value,
// until the object's end or until the walk gives up (w.bad); the loop's
// body moves past each value. (A range over a function: the compiler
// inlines it into each loop: BenchmarkMRTRTwoRounds, which decodes
// its envelopes here, is the same with it, 28.3 µs against 28.4.)
func (w *envWalk) keys() iter.Seq[[]byte] {
	return func(yield func([]byte) bool) {
		if !w.open() {
			return
		}
		first := true
		for !w.bad {
			key, ok := w.member(&first)
			if !ok || !yield(key) {
				return
			}
		}
	}
}

// raw checks the value at w.i and returns it as sent.
func (w *envWalk) raw() []byte {
	end, ok := jsonscan.SkipValueWithin(w.b, w.i, &w.lim, w.depth)
	if !ok {
		w.bad = true
		return nil
	}
	v := w.b[w.i:end]
	w.i = end
	return v
}

// skip checks the value at w.i and moves past it.
func (w *envWalk) skip() { w.raw() }

// object checks that the value at w.i is an object and moves past it.
func (w *envWalk) object() {
	if w.i >= len(w.b) || w.b[w.i] != '{' {
		w.bad = true
		return
	}
	w.skip()
}

// str returns the string at w.i, sharing the body's memory (as
// strictjson.UnmarshalNoCopy does: the body is never modified). It gives
// up on anything but a string without escapes in valid UTF-8.
func (w *envWalk) str() string {
	b := w.b
	if w.i >= len(b) || b[w.i] != '"' {
		w.bad = true
		return ""
	}
	end, plain := jsonscan.ScanString(b, w.i)
	if end < 0 {
		w.bad = true
		return ""
	}
	body := b[w.i+1 : end-1]
	if !plain && (bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body)) {
		w.bad = true
		return ""
	}
	w.i = end
	if len(body) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(body), len(body))
}

// seen records key bit k in *mask and reports whether it was already set
// (a duplicate: the library decides what those mean).
func (w *envWalk) seen(mask *uint32, k uint) bool {
	if *mask&(1<<k) != 0 {
		w.bad = true
		return true
	}
	*mask |= 1 << k
	return false
}

// strField decodes the string member at w.i (key bit k of *mask) into
// *slot and points *dst at it.
func (w *envWalk) strField(mask *uint32, k uint, slot *string, dst **string) {
	if !w.seen(mask, k) {
		*slot = w.str()
		*dst = slot
	}
}

// idField decodes the id member at w.i (key bit k of *mask) into *id: a
// string or a number, as mcp.ID takes them; anything else (null, an
// object, a duplicate) is left to the library decoder.
func (w *envWalk) idField(mask *uint32, k uint, id *mcp.ID) {
	if w.seen(mask, k) || w.i >= len(w.b) || w.b[w.i] != '"' && w.b[w.i] != '-' && (w.b[w.i] < '0' || w.b[w.i] > '9') {
		w.bad = true
		return
	}
	if v := w.raw(); !w.bad && id.UnmarshalJSON(v) != nil {
		w.bad = true
	}
}

// decodeEnvelope decodes body, an ordinary modern request, into a request
// whose id, method and params the library decoder would give it, or
// reports false for the library to decode. It takes only a body within lim
// (see envWalk), which envLimits makes from the server's rpcwire.Limits.
func decodeEnvelope(body []byte, lim *jsonscan.Limits) (*request, bool) {
	w := &envWalk{b: body, lim: *lim}
	if !w.open() {
		return nil, false
	}
	type envRequest struct {
		request
		store envelopeStore
		resp  modernResponse
	}
	er := &envRequest{}
	r, st := &er.request, &er.store
	r.resp = &er.resp
	var f frameWalk
	w.frame(&f, &r.id, func() {
		w.params(&r.p, st.strs[:], func() (*metaIn, []string, *envelopeStore) { return &st.meta, st.mstrs[:], st })
	}, nil)
	r.method = f.method
	if !f.ok(w, body, r.id) || !f.params {
		return nil, false
	}
	r.responsesValid = true // the walk checked every value it took
	return r, true
}

// frameWalk is what the walk of a request's JSON-RPC frame read, besides
// its id.
type frameWalk struct {
	method    string
	mask      uint32 // the members read (bits 0-3: jsonrpc, id, method, params; 4: any other)
	jsonrpcOK bool
	params    bool
}

// ok reports whether the frame is an ordinary request the walk takes: the
// whole body read, "jsonrpc":"2.0", an id, and a method whose params
// paramsIn describes (onePass).
func (f *frameWalk) ok(w *envWalk, body []byte, id mcp.ID) bool {
	return !w.bad && jsonscan.SkipSpace(body, w.i) == len(body) && f.jsonrpcOK && !id.IsZero() &&
		f.method != "" && f.method != "initialize" && onePass(f.method)
}

// frame walks the members of the JSON-RPC message object whose '{' w has
// opened, for both eras: id into *id, the method and what else came into
// f, and params by params (at w.i, its value). A "result" member is
// given to result with the members read before it (a client's answer to
// a server request, legacy sessions only; nil gives up on it, as on
// "error"), which decides what follows: true ends the walk there.
func (w *envWalk) frame(f *frameWalk, id *mcp.ID, params func(), result func(mask uint32, jsonrpcOK bool) bool) {
	first := true
	for !w.bad {
		key, ok := w.member(&first)
		if !ok {
			return
		}
		switch string(key) {
		case "jsonrpc":
			if !w.seen(&f.mask, 0) {
				f.jsonrpcOK = w.str() == rpcwire.Version
			}
		case "id":
			w.idField(&f.mask, 1, id)
		case "method":
			if !w.seen(&f.mask, 2) {
				f.method = w.str()
			}
		case "params":
			if !w.seen(&f.mask, 3) {
				f.params = true
				params()
			}
		case "result":
			if result == nil {
				w.bad = true
			} else if result(f.mask, f.jsonrpcOK) {
				return
			}
		case "error":
			w.bad = true
		default:
			f.mask |= 1 << 4
			w.skip()
		}
	}
}

// envLimits returns lim, its defaults filled in, for decodeEnvelope.
func envLimits(lim rpcwire.Limits) jsonscan.Limits {
	l := lim.WithDefaults()
	return jsonscan.Limits{MaxDepth: l.MaxDepth, MaxMembers: l.MaxMembers, MaxNumberLength: l.MaxNumberLength, MaxNumberExponent: l.MaxNumberExponent}
}

// params decodes the params object at w.i into p, its strings into strs
// (paramStrings of them; a legacy request's legacyParamStrings) and its
// _meta where meta says (its strings; the store of the modern envelope's
// capabilities and client info, nil for a legacy request). A legacy
// request gives up on the members of the modern protocol (requestState,
// inputResponses, taskId); both give up on those of completion/complete
// and subscriptions/listen, which the general path decodes.
func (w *envWalk) params(p *paramsIn, strs []string, meta func() (*metaIn, []string, *envelopeStore)) {
	modern := len(strs) == paramStrings
	var mask uint32
	for key := range w.keys() {
		switch string(key) {
		case "name":
			w.strField(&mask, 0, &strs[strName], &p.Name)
		case "uri":
			w.strField(&mask, 1, &strs[strURI], &p.URI)
		case "cursor":
			w.strField(&mask, 2, &strs[strCursor], &p.Cursor)
		case "requestState":
			if !modern {
				w.bad = true
				break
			}
			w.strField(&mask, 3, &strs[strRequestState], &p.RequestState)
		case "taskId":
			if !modern {
				w.bad = true
				break
			}
			w.strField(&mask, 4, &strs[strTaskID], &p.TaskID)
		case "_meta":
			if !w.seen(&mask, 16) {
				m, mstrs, st := meta()
				p.Meta = m
				w.meta(m, mstrs, st)
			}
		case "arguments":
			if !w.seen(&mask, 17) {
				p.Arguments = w.raw()
			}
		case "inputResponses":
			if !modern {
				w.bad = true
				break
			}
			if !w.seen(&mask, 18) {
				p.InputResponses = w.raw()
			}
		case "ref", "argument", "context", "notifications":
			w.bad = true
		default:
			w.skip()
		}
	}
}

// meta decodes the _meta object at w.i into m, its strings into strs
// (metaStrings of them; a legacy request's legacyMetaStrings) and the
// capabilities and client info into st, which is nil for a legacy
// request: that gives up on the modern envelope's members.
func (w *envWalk) meta(m *metaIn, strs []string, st *envelopeStore) {
	var mask uint32
	for key := range w.keys() {
		switch string(key) {
		case "traceparent":
			w.strField(&mask, 2, &strs[strTraceparent], &m.Traceparent)
		case "tracestate":
			w.strField(&mask, 3, &strs[strTracestate], &m.Tracestate)
		case "baggage":
			w.strField(&mask, 4, &strs[strBaggage], &m.Baggage)
		case "progressToken":
			if !w.seen(&mask, 18) {
				m.ProgressToken = w.raw()
			}
		case metaProtocolVersion, "io.modelcontextprotocol/logLevel", metaClientCaps, "io.modelcontextprotocol/clientInfo":
			if st == nil {
				w.bad = true
				break
			}
			w.modernMeta(key, &mask, m, strs, st)
		default:
			w.skip()
		}
	}
}

// modernMeta decodes the member key of a modern _meta at w.i (see meta).
func (w *envWalk) modernMeta(key []byte, mask *uint32, m *metaIn, strs []string, st *envelopeStore) {
	switch string(key) {
	case metaProtocolVersion:
		w.strField(mask, 0, &strs[strProtocolVersion], &m.ProtocolVersion)
	case "io.modelcontextprotocol/logLevel":
		w.strField(mask, 1, &strs[strLogLevel], &m.LogLevel)
	case metaClientCaps:
		if !w.seen(mask, 16) {
			m.ClientCapabilities = &st.caps
			w.capabilities(st)
		}
	default: // clientInfo
		if !w.seen(mask, 17) {
			m.ClientInfo = &st.info
			w.implementation(&st.info)
		}
	}
}

// capabilities decodes the clientCapabilities object at w.i into st.caps.
func (w *envWalk) capabilities(st *envelopeStore) {
	c := &st.caps
	var mask uint32
	for key := range w.keys() {
		switch string(key) {
		case "elicitation":
			if !w.seen(&mask, 0) {
				c.Elicitation = &st.elic
				w.flags(&st.elic.Form, "form", &st.elic.URL, "url")
			}
		case "sampling":
			if !w.seen(&mask, 1) {
				c.Sampling = &st.samp
				w.flags(&st.samp.Context, "context", &st.samp.Tools, "tools")
			}
		case "roots":
			if !w.seen(&mask, 2) {
				c.Roots = &st.roots
				w.roots(&st.roots)
			}
		case "experimental":
			if !w.seen(&mask, 3) {
				c.Experimental = w.rawMap()
			}
		case "extensions":
			if !w.seen(&mask, 4) {
				c.Extensions = w.rawMap()
			}
		default:
			w.skip()
		}
	}
}

// flags decodes an object at w.i whose members a and b are *mcp.Empty
// flags (any object declares one).
func (w *envWalk) flags(a **mcp.Empty, aKey string, b **mcp.Empty, bKey string) {
	var mask uint32
	for key := range w.keys() {
		switch string(key) {
		case aKey:
			if !w.seen(&mask, 0) {
				w.object()
				*a = new(mcp.Empty) // zero-size: no allocation
			}
		case bKey:
			if !w.seen(&mask, 1) {
				w.object()
				*b = new(mcp.Empty)
			}
		default:
			w.skip()
		}
	}
}

// roots decodes the roots capability at w.i.
func (w *envWalk) roots(rc *mcp.RootsCapability) {
	var mask uint32
	for key := range w.keys() {
		if string(key) != "listChanged" {
			w.skip()
			continue
		}
		if w.seen(&mask, 0) {
			return
		}
		switch v := w.raw(); string(v) {
		case "true":
			rc.ListChanged = true
		case "false":
		default:
			w.bad = true
		}
	}
}

// rawMap decodes an object of any values at w.i, each kept as sent.
func (w *envWalk) rawMap() map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for key := range w.keys() {
		if _, dup := m[string(key)]; dup {
			w.bad = true
			break
		}
		k := string(key)
		m[k] = w.raw()
	}
	return m
}

// implementation decodes the clientInfo object at w.i into info.
func (w *envWalk) implementation(info *mcp.Implementation) {
	var mask uint32
	for key := range w.keys() {
		var dst *string
		switch string(key) {
		case "name":
			if !w.seen(&mask, 0) {
				dst = &info.Name
			}
		case "version":
			if !w.seen(&mask, 1) {
				dst = &info.Version
			}
		case "title":
			if !w.seen(&mask, 2) {
				dst = &info.Title
			}
		case "description":
			if !w.seen(&mask, 3) {
				dst = &info.Description
			}
		case "websiteUrl":
			if !w.seen(&mask, 4) {
				dst = &info.WebsiteURL
			}
		case "icons":
			w.bad = true
		default:
			w.skip()
		}
		if dst != nil {
			*dst = w.str()
		}
	}
}
