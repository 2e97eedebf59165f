//go:build race

package app

// raceEnabled: the race detector slows the proxy about twentyfold, too much for a 500
// requests/s load test, which then runs itself again in a normal build.
const raceEnabled = true
