// Package legacy serves 2025-11-25 (and 2025-06-18, 2025-03-26) MCP clients
// on the same endpoint and process as modern 2026-07-28 ones.
//
// It provides the initialize handshake, sessions with unguessable ids,
// idle expiry and DELETE, POST answered as JSON or SSE, the GET stream for
// session notifications, ping, logging/setLevel, resources/subscribe and
// unsubscribe with update notifications, and notifications/cancelled in
// both directions. Everything else (tools, prompts, resources,
// completions) is dispatched to the server package. A handler's questions
// (server.Call's Elicit, CreateFormElicitation, CreateURLElicitation,
// CreateMessage, ListRoots, AskAll) are real round trips here: each
// becomes a server-to-client request on the stream of the client request
// that caused it (SEP-2260), checked against the session's capabilities,
// bounded by Options.CallTimeout or a per-call server.WithTimeout, and
// cancelled with the client on expiry; the handler never sees
// input_required. A question answered within Options.HoldFor (2 s) goes
// straight to the handler that waits for it; one that is not parks the
// call (see "Waiting calls" below). A URL elicitation needs an elicitationId here
// (NotifyElicitationComplete names it later), and a
// URLElicitationRequiredError becomes -32042.
//
// A handler that suspends (server.Call.Suspend: an input_required result
// that carries only a requestState) is run again by the bridge with its
// sealed state, up to Options.MaxRounds times; the state never reaches
// the client.
//
// # Notifications and re-runs
//
// The bridge runs a suspended handler again from the top, so the handler
// sends again what it sent before it suspended. The client
// sees every notification of a request once, by these rules, which hold
// for the whole request (all its runs):
//
//   - notifications/progress goes out only when its progress is greater
//     than the last value sent for its progressToken, so progress on the
//     wire strictly increases and never repeats (the 2025-11-25
//     specification requires it to increase); a handler's own progress
//     that stands still or goes back is dropped too.
//   - Any other notification (notifications/message,
//     notifications/elicitation/complete, …) is the same notification as
//     another when its JSON-RPC message is byte for byte the same. In each
//     run the n-th copy of a message goes out only if no earlier run sent
//     n copies of it. A replayed log line is therefore dropped; a message
//     that is new in a later run (say, a log line written after the answer
//     arrived), or one more copy of an old one, still goes out. A message
//     whose bytes change between runs (a timestamp in the data) counts as
//     new and is sent again. A request remembers its first 1024 distinct
//     notifications and progress tokens; later ones are sent unchecked.
//   - A blocking client call (server.Call.CreateFormElicitation and the
//     others) made again in a later run, at the same position among the
//     run's blocking calls and with the same requests, returns the answers
//     the client gave before instead of asking it again.
//
// # Sessions, limits and fleets
//
// An HTTP session's record (what initialize negotiated, the principal, the
// log level, the subscriptions, the last use) is kept in Options.Store: by
// default a memory store of the adapter, for one process. Give every
// instance of a fleet the same shared store (redisfleet.Fleet.Sessions) and
// no affinity is needed: any instance serves any request of a session, and
// a client's answer to a server-to-client request, POSTed to any instance,
// reaches the call waiting for it on the instance that holds it (the ids
// of such requests name that instance). notifications/cancelled, DELETE
// and a GET stream work from any instance too (docs/deployment.md,
// "Legacy sessions", says how). An answer is acknowledged (202) only for
// a request that waits for it in that session, within
// Options.MaxAnswerBytes and Options.MaxAnswersPerSecond, and once it is
// sure to reach its call (kept in the store until the call reads it).
//
// Every SSE event of a session's streams has an id and is kept in an
// EventStore (Options.Events): a client whose stream was cut resumes it
// with GET and Last-Event-ID on any instance, and gets what it missed, a
// pending server-to-client request included; a cut stream does not cancel
// its call. A handler may end its POST stream itself before its response
// (server.Call.CloseStream, SSE polling): the client resumes it the same
// way and gets the response there.
//
// # Waiting calls
//
// A call that waits for its client's answer is data, not a goroutine. A
// question not answered within Options.HoldFor parks the call: what
// another run of the handler needs (the request, the answers so far by
// question position, the open questions, the progress sent) is the
// call's record in the Store, the question is on the call's stream in the
// EventStore, the handler's blocking call returns an error wrapping
// mrtr.ErrInputRequired, and the handler returns (what it returns then
// is dropped). A 2025-11-25 client's stream then ends with a retry field
// (SSE polling), so no connection is held either; older clients keep
// their stream until a drain. The answer, POSTed to any instance, is kept
// in the store before it is acknowledged, and the call runs again from
// the top, with the recorded answers, on the instance that asked it if
// that one is alive, else on the instance of the stream the client
// resumes: each question asked again at the same position with the same
// requests gets its answer, and what follows (the next question, the
// response) goes to the call's stream, where the client reads it on any
// instance. This is the handler contract of 2026-07-28 rounds: the code
// before a question may run again, so keep it free of side effects, or
// register the tool with server.RunsOnce, whose questions wait in place
// (the call is then lost with its instance).
//
// With a shared store (redisfleet) the record is written when the
// question is asked, and again with its answers, so an instance that dies
// (SIGKILL) loses no waiting call: a client that resumes the call's
// stream elsewhere takes it over once the instance's heartbeat lapses
// (about 6 s), and a run lost while it ran is run again, at most 3
// times. A drain (Shutdown) parks every waiting call at once, so an
// instance with only waiting work stops at once. With the default memory
// store (one process) the record is written when the call parks.
// Notifications other than progress that a run sent before the call moved
// may be sent again by the run on the new instance (the dedup of re-runs
// holds within one instance).
//
// A session expires once it has gone Options.SessionIdle without use (a
// request other than ping, a call in flight, an open GET stream); the
// store expires it, by its own clock, with no sweeper to wait for. Each
// principal, or for anonymous callers each client address (read behind
// Options.TrustedProxies from X-Forwarded-For), may hold
// Options.MaxSessionsPerClient sessions, and the store Options.MaxSessions;
// initialize beyond them is refused with 429 or 503 and a Retry-After
// saying when the soonest counted session expires. A client that floods
// initialize therefore fills its own quota, not the server.
//
// New returns an adapter to give to server.New as Options.Legacy (its
// contract with the server lives in an internal package, so server never
// imports this one). Routing follows
// the specification: initialize (without a modern _meta envelope) and
// requests carrying an Mcp-Session-Id take the legacy path before modern
// header validation; everything else is modern.
package legacy
