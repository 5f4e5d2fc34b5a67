package legacy

import (
	"net/http"

	"github.com/baton-mcp/baton/internal/clientaddr"
	"github.com/baton-mcp/baton/server"
)

// owner returns whom a new session counts against for
// Options.MaxSessionsPerClient: its principal when authenticated, otherwise
// the client's address.
func (h *adapter) owner(r *http.Request) string {
	if p := server.PrincipalFromContext(r.Context()); p != "" {
		return "principal:" + p
	}
	return "address:" + clientAddress(r, h.opts.TrustedProxies).String()
}

// The client-address reading lives in internal/clientaddr, shared with
// package server's task quotas.
var (
	clientAddress  = clientaddr.Of
	peerAddr       = clientaddr.Peer
	parseForwarded = clientaddr.ParseForwarded
)

const maxForwardedHops = clientaddr.MaxHops
