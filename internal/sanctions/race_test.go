//go:build race

package sanctions

// slowdown is how much slower the race detector makes this package's
// code, for the tests that hold it to a time.
const slowdown = 10
