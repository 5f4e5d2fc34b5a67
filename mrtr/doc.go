// Package mrtr is the vocabulary of Multi Round-Trip Requests (SEP-2322)
// for MCP 2026-07-28, the ways a tools/call, prompts/get or resources/read
// handler asks its client for input and resumes with the answer:
//
//   - InputRequest: one question (an elicitation, a sampling request, a
//     roots listing), optionally under a key of the handler's own (Keyed);
//     handlers ask with the methods of server.Call.
//   - ErrInputRequired: wrapped by the error of a question whose answer is
//     not known yet on the stateless protocol; the handler returns it and
//     the server answers input_required.
//   - KeyRing and Key: the keys that sign and encrypt the requestState, so
//     that any instance holding them finishes a flow another began.
//
// The single-use ledger (server.Ledger) and the principal a state is bound
// to (server.ContextWithPrincipal) belong to package server.
//
// The requestState itself is a JWT (HS256 only, keys chosen by "kid" so
// keys can rotate) followed by AES-256-GCM encrypted content, whose nonce
// and tag the JWT's claims carry, that binds the
// method, the target, a digest of the canonical arguments, every question
// issued and every answer given so far, the principal, the round and an
// expiry; the server seals and verifies it (server/internal/seal,
// server/internal/round) and refuses a retry whose state fails any check
// before the handler runs.
//
// Import direction: mrtr imports mcp and elicit; server imports mrtr.
package mrtr
