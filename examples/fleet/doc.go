// Package fleet is a fleet of Baton instances behind nginx: three
// examples/everything processes sharing one requestState key and one Redis
// ledger, balanced round-robin, so every MRTR round of a flow may land on
// another instance and a confirmation is redeemed once across all three.
//
// run.sh starts one for trying by hand; the package's test starts one, runs
// many multi-round flows through it concurrently, replays a confirmed
// transfer to every instance, and rotates the key while flows are in
// flight. See README.md.
package fleet
