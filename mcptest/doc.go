// Package mcptest is a test client for MCP servers on the stateless
// 2026-07-28 protocol (and, by option, 2025-11-25 sessions). It drives a server through multi round-trip
// requests the way a real client would, so a test states what the user
// answers and checks what the tool returns, without building envelopes,
// headers or retries by hand.
//
// A Client sends every request through a Target:
//
//   - Handler(h) calls h.ServeHTTP in process, with no socket; the
//     response streams, so SSE notifications arrive as the server flushes
//     them.
//   - URL(endpoint, hc) posts to a real server (an httptest.Server on
//     loopback, a process under test).
//   - RoundRobin(targets...) sends each request to the next target in
//     turn, so a flow's rounds move between instances that share a state
//     key, as they would behind a load balancer.
//
// Every request carries the _meta envelope (protocolVersion 2026-07-28,
// clientCapabilities, clientInfo, and logLevel and progressToken when
// asked for) and the transport's headers (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, Accept and Content-Type), plus Options.Header.
// Mcp-Name carries the tool or prompt name, the resource URI, or the
// taskId of a tasks/get, tasks/update or tasks/cancel. The capabilities
// follow from the callbacks in Options unless set explicitly.
//
// CallTool, GetPrompt and ReadResource drive rounds: when the server
// answers input_required, each embedded request goes to the matching
// callback (Options.Elicitation, Sampling or Roots), and the call is sent
// again with the answers as inputResponses and the requestState echoed,
// until the result is complete or Options.MaxRounds requests were sent
// (ErrTooManyRounds). The result's Exchange records every round: its input
// requests, the answers sent, the requestState, and the notifications of
// its stream.
//
// Tasks (the io.modelcontextprotocol/tasks extension, SEP-2663): with
// Options.Tasks the client declares the extension, and a CallTool the
// server answers with a task polls tasks/get until the task ends,
// answering each question the task asks (status input_required) with the
// same callbacks, through tasks/update, and returns the tool's result. A
// test that wants control calls StartTask instead and gets a *Task: Get,
// Update (answers as given), Answer (answers from the callbacks), Cancel
// and Wait.
//
// 2025-11-25 sessions: with Options.Protocol set to LegacyProtocolVersion
// the client speaks the older revision. Its first request opens the
// session (Connect: initialize, then notifications/initialized) and every
// later one carries Mcp-Session-Id and the negotiated
// MCP-Protocol-Version. CallTool, GetPrompt and ReadResource read the
// call's stream and answer the server's requests on it
// (elicitation/create, sampling/createMessage, roots/list, ping) with the
// same callbacks as input_required rounds; the Exchange then has one round
// whose InputRequests are those requests, keyed by their JSON-RPC ids.
// Send("GET") opens the session's GET stream, EndSession sends DELETE,
// and Open, Send, Notify and Respond drive a session step by step, reading each response as a Stream of Messages.
//
// Errors are values: a JSON-RPC error response is a *Error carrying the
// code, message, data, HTTP status and round; a request the client cannot
// answer wraps ErrNoCallback; a server that breaks the protocol (a result
// without resultType, an input request the client did not declare it can
// answer, a request sent on a response stream) wraps ErrProtocol.
//
// For error paths, Do sends one request and returns the raw Response
// (status, result or error, notifications) without driving rounds, and
// DoRaw posts a body exactly as given.
//
// The client checks what the server sends but not what the callbacks
// answer: a test may send an answer the server must refuse.
package mcptest
