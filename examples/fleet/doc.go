// Package fleet is a fleet of Baton instances behind nginx: three
// examples/everything processes sharing one requestState key, balanced
// round-robin, so every MRTR round of a flow may land on another instance.
//
// run.sh starts one for trying by hand; the package's test starts one, runs
// many multi-round flows through it concurrently, and rotates the key while
// flows are in flight. See README.md.
package fleet
