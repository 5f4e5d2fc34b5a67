// Package server is Baton's MCP server: the registry of tools, prompts,
// resources and completions, the stateless 2026-07-28 dispatch, and the
// transports (Streamable HTTP as a net/http Handler, and stdio; on echo,
// echo.WrapHandler serves it).
//
// One request travels like this: the HTTP layer checks Origin and Host, the
// body size and the JSON nesting depth; the message is decoded and its
// _meta envelope read (protocol version and client capabilities are
// required); the MCP headers are compared with the body; the version is
// checked; a retry's requestState is verified (before any other work on
// what the request carries); the middleware runs; the method is
// dispatched. A tools/call, prompts/get or resources/read handler asks the
// client for input with the methods of its Call: when an answer is not
// known yet the server answers with an input_required result and a sealed
// requestState (see Call). Results carry resultType and serverInfo; lists and reads carry
// caching hints. Progress and log notifications stream on the request's own
// SSE response as they happen.
//
// The response stays a plain JSON body until the first notification is
// sent; an error before that gets its HTTP status (400 for -32602 and for
// a missing client capability, -32021). Once a notification has opened
// the event stream the status is 200 and an error can only be its last
// event, so a tool that reports progress before asking for something the
// client may lack declares the need in RequireCapabilities: the call is
// then refused with 400 before the handler runs.
//
// Import direction: server uses mcp, elicit, mrtr, tasks, its
// own engine (server/internal/seal, server/internal/round) and the
// plumbing of the module's internal packages (era, rpcwire, ...); never
// echo (echo.WrapHandler serves a Server there). The legacy
// package (2025-11-25 sessions) plugs in through Options.Legacy (a
// LegacyAdapter, whose contract lives in internal/era), so server never
// imports it.
package server
