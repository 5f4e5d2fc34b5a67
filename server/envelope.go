package server

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
	"unsafe"

	"github.com/baton-mcp/baton/internal/jsonscan"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/jsonrpc"
	"github.com/baton-mcp/baton/mcp"
)

// The request envelope (the JSON-RPC frame, params and _meta) of the usual
// modern request is read by hand, in one pass over the body, by
// decodeEnvelope below; anything it does not take falls back to the
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
	info  Implementation
	strs  [envStrings]string
}

// The strings of envelopeStore.strs.
const (
	strName = iota
	strURI
	strRequestState
	strCursor
	strTaskID
	strProtocolVersion
	strLogLevel
	strTraceparent
	strTracestate
	strBaggage
	envStrings
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
// string or a number, as jsonrpc.ID takes them; anything else (null, an
// object, a duplicate) is left to the library decoder.
func (w *envWalk) idField(mask *uint32, k uint, id *jsonrpc.ID) {
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
	var (
		mask                 uint32
		jsonrpcOK, hasParams bool
		first                = true
	)
	for !w.bad {
		key, ok := w.member(&first)
		if !ok {
			break
		}
		switch string(key) {
		case "jsonrpc":
			if !w.seen(&mask, 0) {
				jsonrpcOK = w.str() == "2.0"
			}
		case "id":
			w.idField(&mask, 1, &r.id)
		case "method":
			if !w.seen(&mask, 2) {
				r.method = w.str()
			}
		case "params":
			if !w.seen(&mask, 3) {
				hasParams = true
				w.params(&r.p, st)
			}
		case "result", "error":
			w.bad = true
		default:
			w.skip()
		}
	}
	if w.bad || jsonscan.SkipSpace(body, w.i) != len(body) || !jsonrpcOK || r.id.IsZero() || !hasParams ||
		r.method == "" || r.method == "initialize" || !onePass(r.method) {
		return nil, false
	}
	r.responsesValid = true // the walk checked every value it took
	return r, true
}

// envLimits returns lim, its defaults filled in, for decodeEnvelope.
func envLimits(lim rpcwire.Limits) jsonscan.Limits {
	l := lim.WithDefaults()
	return jsonscan.Limits{MaxDepth: l.MaxDepth, MaxMembers: l.MaxMembers, MaxNumberLength: l.MaxNumberLength, MaxNumberExponent: l.MaxNumberExponent}
}

// params decodes the params object at w.i into p.
func (w *envWalk) params(p *paramsIn, st *envelopeStore) {
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
			w.strField(&mask, 0, &st.strs[strName], &p.Name)
		case "uri":
			w.strField(&mask, 1, &st.strs[strURI], &p.URI)
		case "requestState":
			w.strField(&mask, 2, &st.strs[strRequestState], &p.RequestState)
		case "cursor":
			w.strField(&mask, 3, &st.strs[strCursor], &p.Cursor)
		case "taskId":
			w.strField(&mask, 4, &st.strs[strTaskID], &p.TaskID)
		case "_meta":
			if !w.seen(&mask, 16) {
				p.Meta = &st.meta
				w.meta(&st.meta, st)
			}
		case "arguments":
			if !w.seen(&mask, 17) {
				p.Arguments = w.raw()
			}
		case "inputResponses":
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

// meta decodes the _meta object at w.i into m.
func (w *envWalk) meta(m *metaIn, st *envelopeStore) {
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
		case metaProtocolVersion:
			w.strField(&mask, 0, &st.strs[strProtocolVersion], &m.ProtocolVersion)
		case "io.modelcontextprotocol/logLevel":
			w.strField(&mask, 1, &st.strs[strLogLevel], &m.LogLevel)
		case "traceparent":
			w.strField(&mask, 2, &st.strs[strTraceparent], &m.Traceparent)
		case "tracestate":
			w.strField(&mask, 3, &st.strs[strTracestate], &m.Tracestate)
		case "baggage":
			w.strField(&mask, 4, &st.strs[strBaggage], &m.Baggage)
		case metaClientCaps:
			if !w.seen(&mask, 16) {
				m.ClientCapabilities = &st.caps
				w.capabilities(st)
			}
		case "io.modelcontextprotocol/clientInfo":
			if !w.seen(&mask, 17) {
				m.ClientInfo = &st.info
				w.implementation(&st.info)
			}
		case "progressToken":
			if !w.seen(&mask, 18) {
				m.ProgressToken = w.raw()
			}
		default:
			w.skip()
		}
	}
}

// capabilities decodes the clientCapabilities object at w.i into st.caps.
func (w *envWalk) capabilities(st *envelopeStore) {
	c := &st.caps
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
	if !w.open() {
		return nil
	}
	m := map[string]json.RawMessage{}
	first := true
	for !w.bad {
		key, ok := w.member(&first)
		if !ok {
			break
		}
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
func (w *envWalk) implementation(info *Implementation) {
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
