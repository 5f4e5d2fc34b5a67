// Package mcptest is a test client for MCP servers on the stateless
// 2026-07-28 protocol. It drives a server through multi round-trip
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
