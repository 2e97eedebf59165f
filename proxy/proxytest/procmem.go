package proxytest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ProcMemMB returns a process's peak (VmHWM) and current (VmRSS) resident set in MiB, as
// Linux reports them in /proc/<pid>/status: what the benchmarks compare between processes.
func ProcMemMB(pid int) (peak, current float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	var gotPeak, gotCur bool
	for line := range strings.SplitSeq(string(b), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmHWM" && name != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
		if err != nil {
			return 0, 0, fmt.Errorf("parse %s: %w", line, err)
		}
		if name == "VmHWM" {
			peak, gotPeak = kb/1024, true
		} else {
			current, gotCur = kb/1024, true
		}
	}
	if !gotPeak || !gotCur {
		return 0, 0, errors.New("no VmHWM/VmRSS in /proc/<pid>/status")
	}
	return peak, current, nil
}
