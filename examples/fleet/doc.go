// Package fleet is a fleet of Baton instances behind nginx: three
// examples/everything processes sharing one requestState key and one
// Redis (a ledger, tasks and 2025-11-25 sessions), balanced round-robin,
// so every MRTR round of a flow may land on another instance, a
// confirmation is redeemed once across all three, and tasks and legacy
// sessions are served by any instance.
//
// run.sh starts one for trying by hand; the package's test starts one, runs
// many multi-round flows through it concurrently, replays a confirmed
// transfer to every instance, drives tasks and TypeScript SDK 2025-11-25
// sessions through it, kills an instance mid-way, and rotates the key
// while flows are in flight. See README.md.
package fleet
