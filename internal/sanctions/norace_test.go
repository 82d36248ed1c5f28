//go:build !race

package sanctions

// slowdown is how much slower the race detector makes this package's
// code, for the tests that hold it to a time: without it, none.
const slowdown = 1
