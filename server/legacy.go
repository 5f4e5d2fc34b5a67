package server

import (
	"encoding/json"
	"net/http"

	"github.com/baton-mcp/baton/internal/strictjson"
	"github.com/baton-mcp/baton/jsonrpc"
)

// LegacyHandler serves 2025-11-25 (and earlier) clients on the same
// endpoint as modern ones. The legacy package provides one; server routes
// to it and never imports it.
type LegacyHandler interface {
	// Versions lists the legacy protocol versions served.
	Versions() []string
	// ServeLegacy serves a request routed to the legacy era. body and msg
	// are the already-read body and its decoded message; both are nil for
	// GET and DELETE.
	ServeLegacy(w http.ResponseWriter, r *http.Request, body []byte, msg *jsonrpc.Message)
}

// SetLegacy attaches a legacy handler. Call it before serving.
func (s *Server) SetLegacy(l LegacyHandler) { s.legacy = l }

// isLegacy reports whether a POST belongs to the legacy era: it carries a
// session id, or it is an initialize without a modern envelope.
func (s *Server) isLegacy(r *http.Request, msg *jsonrpc.Message) bool {
	if r.Header.Get(HeaderSessionID) != "" {
		return true
	}
	return msg.Method == "initialize" && !hasModernMeta(msg.Params)
}

// hasModernMeta reports whether params carry a modern _meta envelope (a
// protocol version key).
func hasModernMeta(params json.RawMessage) bool {
	if len(params) == 0 {
		return false
	}
	var p struct {
		Meta struct {
			Version *json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	return strictjson.Unmarshal(params, &p) == nil && p.Meta.Version != nil
}
