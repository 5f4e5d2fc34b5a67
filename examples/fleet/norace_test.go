//go:build !race

package fleet_test

const raceBuild = false
