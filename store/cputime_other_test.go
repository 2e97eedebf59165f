//go:build !unix

package store

import (
	"testing"
	"time"
)

// processCPU is not measured here: benchmarks report 0 CPU time.
func processCPU(testing.TB) time.Duration { return 0 }
