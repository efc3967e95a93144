package sweep

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Lines prints a sweep's progress as plain lines, for a writer that is
// not a terminal (a log, a pipe; `tcpmap sweep` draws a progress bar on a
// terminal): every period a line with the count, the rate and the ETA,
// and a line for each failed point. Update and Close may be called from
// any goroutine.
type Lines struct {
	mu     sync.Mutex
	w      io.Writer
	last   Progress
	ticker *time.Ticker
	done   chan struct{}
	closed bool
}

// NewLines starts printing to w a progress line every period, from the
// last Progress Update gave (none before the first), until Close.
func NewLines(w io.Writer, every time.Duration) *Lines {
	l := &Lines{w: w, ticker: time.NewTicker(every), done: make(chan struct{})}
	go func() {
		for {
			select {
			case <-l.ticker.C:
				l.line()
			case <-l.done:
				return
			}
		}
	}()
	return l
}

// Update records a finished point (Options.Progress) and prints a line
// when it failed.
func (l *Lines) Update(p Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last = p
	if p.Err != nil && !l.closed {
		fmt.Fprintf(l.w, "sweep: failed: %v\n", p.Err)
	}
}

// line prints the progress line, unless the progress is closed: a tick
// taken just before Close must not write after it (the race detector
// caught one writing to a test's stderr buffer after the command had
// returned).
func (l *Lines) line() {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.last
	if s.Total == 0 || l.closed {
		return
	}
	planned := s.Done - s.Cached
	rate := float64(planned) / s.Elapsed.Seconds()
	eta := "?"
	if rate > 0 {
		eta = time.Duration(float64(s.Total-s.Done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	fmt.Fprintf(l.w, "sweep: %d/%d points (%d from the store), %.3g points/s, ETA %s\n", s.Done, s.Total, s.Cached, rate, eta)
}

// Close stops the lines: nothing is written to w once it returns. Closing
// again does nothing.
func (l *Lines) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	l.ticker.Stop()
	close(l.done)
}
