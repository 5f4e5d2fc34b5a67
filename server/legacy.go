package server

import (
	"encoding/json"
	"net/http"

	"github.com/baton-mcp/baton/internal/era"
	"github.com/baton-mcp/baton/internal/rpcwire"
	"github.com/baton-mcp/baton/internal/strictjson"
)

// LegacyAdapter serves 2025-11-25 (and 2025-06-18, 2025-03-26) clients on
// the same endpoint and process as modern ones: package legacy's New
// returns one, and Options.Legacy installs it. It cannot be implemented
// outside this module.
type LegacyAdapter interface {
	era.Adapter[*Server, RequestMeta]
}

// legacyDispatcher is the server's side of era.Dispatcher.
type legacyDispatcher struct{ s *Server }

// isLegacy reports whether a POST belongs to the legacy era: it carries a
// session id, or it is an initialize without a modern envelope.
func (s *Server) isLegacy(r *http.Request, msg *rpcwire.Message) bool {
	if r.Header.Get(headerSessionID) != "" {
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
