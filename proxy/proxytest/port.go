package proxytest

import (
	"net"
	"testing"
)

// FreePort returns a loopback port that was free a moment ago, for tests that start a real
// listener on a port of their choosing (the proxy, the app binary).
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
