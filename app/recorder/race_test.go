//go:build race

package recorder

// raceEnabled: the race detector slows the proxy and the pure-Go SQLite about twentyfold, so
// the load tests send less.
const raceEnabled = true
