// Package mrtr implements Multi Round-Trip Requests (SEP-2322) for MCP
// 2026-07-28: how a tools/call, prompts/get or resources/read handler
// suspends to ask the client for input, and how the retry resumes it.
//
// A handler sees the request's Round. It asks with Round.Elicit,
// Round.Sample, Round.ListRoots or Round.Ask; each returns the answer when
// the retry carries one for a request that was really issued, and otherwise
// records the question and returns an error wrapping ErrInputRequired that
// the handler passes up. The server then answers with an input_required
// result: every recorded question, and a requestState that the Sealer signs.
//
// The requestState is a JWT (HS256 only, keys chosen by "kid" from a
// KeyRing so keys can rotate). Its claims bind the method, the target (tool
// or prompt name, or resource URI), a SHA-256 digest of the canonical
// arguments, the digest of every input request issued under its key, the
// principal, an optional audience, an expiry and the handler's own payload.
// A retry whose state fails any check is refused before the handler runs,
// and answers are handed to a handler only for questions the verified state
// says were issued, asked again in identical form.
//
// Import direction: mrtr uses elicit, content and jsonrpc; server uses mrtr.
package mrtr
