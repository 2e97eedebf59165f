package recorder

import (
	"runtime"
	"sync"
	"testing"
)

// TestBackgroundThreadIsLowestPriorityAndEndsWithItsGoroutine: the writer's thread runs at
// nice 19, and once the goroutine returns no other goroutine runs at that priority (its
// thread ends with it, or, were it the main thread, is left idle for good).
func TestBackgroundThreadIsLowestPriorityAndEndsWithItsGoroutine(t *testing.T) {
	type result struct {
		ok   bool
		nice int
	}
	got := make(chan result)
	go func() {
		ok := backgroundThread()
		nice, _ := threadNice()
		got <- result{ok, nice}
	}()
	if r := <-got; !r.ok || r.nice != 19 {
		t.Fatalf("backgroundThread = %v, nice %d; want the thread at nice 19", r.ok, r.nice)
	}
	// Goroutines spread over the process's threads: none runs at nice 19.
	var wg sync.WaitGroup
	var mu sync.Mutex
	niced := 0
	for range 200 {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if nice, err := threadNice(); err != nil || nice != 0 {
				mu.Lock()
				niced++
				mu.Unlock()
			}
			runtime.Gosched()
		})
	}
	wg.Wait()
	if niced != 0 {
		t.Fatalf("%d of 200 goroutines ran on a thread not at nice 0 after the writer ended", niced)
	}
}
