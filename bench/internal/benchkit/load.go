package benchkit

import (
	"sync"
	"sync/atomic"
	"time"
)

// Load is a closed-loop load: Workers goroutines, each making its next call as
// soon as the last one has returned, through a warm-up and then a measured
// window. What a call counts toward is the caller's: a call asks Counting once
// it has returned, so that it counts when it ends inside the window.
type Load struct {
	// Workers is how many goroutines call at once.
	Workers int
	// Warmup is how long they call before the window opens.
	Warmup time.Duration
	// Measure is how long the window stays open.
	Measure time.Duration
	// OnStart and OnStop, if set, run as the window opens and as it closes
	// (to take CPU snapshots around it).
	OnStart, OnStop func()

	counting atomic.Bool
}

// Counting reports whether the measured window is open.
func (l *Load) Counting() bool { return l.counting.Load() }

// Run calls fn from every worker (w the worker, i its call, from 0) until the
// window has closed, waits for the calls under way, and returns how long the
// window was open.
func (l *Load) Run(fn func(w, i int)) time.Duration {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < l.Workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				fn(w, i)
			}
		}(w)
	}
	time.Sleep(l.Warmup)
	if l.OnStart != nil {
		l.OnStart()
	}
	l.counting.Store(true)
	start := time.Now()
	time.Sleep(l.Measure)
	l.counting.Store(false)
	elapsed := time.Since(start)
	if l.OnStop != nil {
		l.OnStop()
	}
	close(stop)
	wg.Wait()
	return elapsed
}
