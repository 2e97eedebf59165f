package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// newClient is the load generator's client: loopback only, enough idle connections for 64
// concurrent streams, and a bound no healthy run reaches.
func newClient() *http.Client {
	return &http.Client{
		Timeout: time.Minute,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// post sends one Messages request and reads the whole reply; it fails unless the status is 200
// and the reply has wantLen bytes, so a broken target cannot post a fast figure.
func post(c *http.Client, base string, body []byte, wantLen int) error {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	req.Header.Set("X-Api-Key", "sk-ant-bench-client")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil {
		return fmt.Errorf("reading reply: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	if n != int64(wantLen) {
		return fmt.Errorf("reply is %d bytes; want %d", n, wantLen)
	}
	return nil
}

// throughput runs workers concurrent request loops for d and returns completed requests per
// second.
func throughput(c *http.Client, base string, workers int, d time.Duration, body []byte, wantLen int) (float64, error) {
	var done atomic.Int64
	var firstErr error
	var once sync.Once
	stop := make(chan struct{})
	var wg sync.WaitGroup
	t0 := time.Now()
	for range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := post(c, base, body, wantLen); err != nil {
					once.Do(func() { firstErr = err; close(stop) })
					return
				}
				done.Add(1)
			}
		})
	}
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
		once.Do(func() { close(stop) })
	case <-stop:
		timer.Stop()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return float64(done.Load()) / time.Since(t0).Seconds(), nil
}

// concurrentWave sends n requests at once and waits for all; it fails on the first error.
func concurrentWave(c *http.Client, base string, n int, body func(i int) []byte, wantLen int) error {
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		b := body(i)
		wg.Go(func() {
			if err := post(c, base, b, wantLen); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fmt.Errorf("%d of %d requests failed; first: %w", len(errs)+1, n, err)
	}
	return nil
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianFloat(fs []float64) float64 {
	if len(fs) == 0 {
		return 0
	}
	s := slices.Clone(fs)
	slices.Sort(s)
	return s[len(s)/2]
}

// procCPU returns the CPU time a process's threads have run so far, in nanoseconds: the sum
// of the first field of /proc/PID/task/TID/schedstat, the scheduler's own account of each
// thread's time on a CPU. /proc/PID/stat counts in clock ticks of 10 ms, and the phase that
// reads the CPU per 1,000 large requests costs a target ≈ 0.3 s: a tick either way moved
// that row's ratio by several percent from round to round. A thread that exited takes its
// time with it; Go's threads live as long as the process. Without schedstat (a kernel built
// without it) it falls back to /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return 0, err
	}
	var total time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Stat(fmt.Sprintf("/proc/%d/task/%s", pid, t.Name())); serr == nil {
				return statCPU(pid) // the thread is there, its schedstat is not: no schedstat here
			}
			continue // the thread exited since the listing
		}
		if err != nil {
			return 0, err
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0, errors.New("empty schedstat")
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse schedstat: %w", err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on every Linux build Go
// supports (the kernel exports it fixed, whatever CONFIG_HZ is).
const clockTicks = 100

// statCPU returns a process's user+system CPU time so far, from /proc/PID/stat, in clock ticks.
func statCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its closing parenthesis
	// are space-separated, utime and stime being the 14th and 15th of the whole line.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/PID/stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short /proc/PID/stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("parse /proc/PID/stat: %w", err)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}
