//go:build race

package fleet_test

// raceBuild is true when the test runs with -race: the instances are then
// built with the race detector too.
const raceBuild = true
