// Package legacy will serve 2025-11-25 (and earlier) MCP clients on the
// same endpoint and process as modern 2026-07-28 ones: the initialize
// handshake, Mcp-Session-Id sessions, server-to-client requests over SSE,
// the blocking ServerContext (elicitation, sampling, roots, progress and
// logging with bounded waits), and the bridge that serves MRTR handlers to
// legacy clients by turning input_required results into real requests.
//
// It plugs into the server package through server.LegacyHandler; server
// never imports it.
package legacy
