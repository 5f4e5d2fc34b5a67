// Package legacy serves 2025-11-25 (and 2025-06-18, 2025-03-26) MCP clients
// on the same endpoint and process as modern 2026-07-28 ones.
//
// It provides the initialize handshake, sessions with unguessable ids,
// idle expiry and DELETE, POST answered as JSON or SSE, the GET stream for
// session notifications, ping, logging/setLevel, resources/subscribe and
// unsubscribe with update notifications, and notifications/cancelled in
// both directions. Everything else (tools, prompts, resources,
// completions) is dispatched to the server package, whose handlers may:
//
//   - call the blocking client methods of server.Call (CreateFormElicitation,
//     CreateURLElicitation, NotifyElicitationComplete, CreateMessage,
//     ListRoots): each becomes a real server-to-client request on the stream
//     of the client request that caused it (SEP-2260), checked against the
//     session's capabilities, bounded by Options.CallTimeout or a per-call
//     server.WithTimeout, cancelled with the client on expiry;
//   - ask through their mrtr.Round and return input_required: the bridge
//     sends the embedded requests to the client concurrently, calls the
//     handler again with the answers and the sealed state, and repeats up to
//     Options.MaxRounds times. The state never reaches the client.
//
// Attach plugs a Handler into a server.Server through
// server.LegacyHandler; server never imports this package. Routing follows
// the specification: initialize (without a modern _meta envelope) and
// requests carrying an Mcp-Session-Id take the legacy path before modern
// header validation; everything else is modern.
package legacy
