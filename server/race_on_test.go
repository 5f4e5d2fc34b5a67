//go:build race

package server

// raceEnabled reports a build with the race detector, which allocates on
// its own and so has allocation budgets of its own.
const raceEnabled = true
