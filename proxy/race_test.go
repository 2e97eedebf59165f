//go:build race

package proxy

// raceEnabled: the race detector keeps shadow memory several times the heap, so the memory
// tests have nothing to measure under it.
const raceEnabled = true
