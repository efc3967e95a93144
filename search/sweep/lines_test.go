package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLinesText: the line's text, and nothing before the first update.
func TestLinesText(t *testing.T) {
	var b strings.Builder
	l := NewLines(&b, time.Hour)
	l.line()
	assert.Empty(t, b.String(), "no line before the first update")
	l.Update(Progress{Done: 3, Total: 12, Cached: 1, Elapsed: 2 * time.Second})
	l.line()
	l.Update(Progress{Done: 4, Total: 12, Cached: 4, Elapsed: time.Second})
	l.line()
	l.Update(Progress{Done: 5, Total: 12, Cached: 4, Elapsed: time.Second, Err: errors.New("fake.yaml:4:3: boom")})
	l.Close()
	l.line()
	l.Update(Progress{Done: 6, Total: 12, Err: errors.New("late")})
	l.Close()
	assert.Equal(t, "sweep: 3/12 points (1 from the store), 1 points/s, ETA 9s\n"+
		"sweep: 4/12 points (4 from the store), 0 points/s, ETA ?\n"+
		"sweep: failed: fake.yaml:4:3: boom\n", b.String(), "nothing after Close")
}

// TestLinesConcurrent ticks every microsecond while goroutines update the
// progress, and closes while the ticks run. Under the race detector (make
// test) it checks Lines' lock; and a tick taken just before Close must not
// write after it: the test reads the buffer after Close without a lock, as
// `tcpmap sweep`'s tests read its stderr once the command returned.
func TestLinesConcurrent(t *testing.T) {
	line := regexp.MustCompile(`^sweep: \d+/100 points \(\d+ from the store\), [0-9.e+]+ points/s, ETA \S+$`)
	for round := range 20 {
		var b bytes.Buffer
		l := NewLines(&b, time.Microsecond)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for i := range 25 {
					done := g*25 + i + 1
					l.Update(Progress{Done: done, Total: 100, Cached: done / 4, Elapsed: time.Duration(done) * time.Millisecond})
					if round%2 == 0 {
						time.Sleep(10 * time.Microsecond)
					}
				}
			})
		}
		wg.Wait()
		// Let it tick (the buffer read under Lines' lock, which its
		// writes hold), then close while it ticks.
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Microsecond) {
			l.mu.Lock()
			n := b.Len()
			l.mu.Unlock()
			if n > 0 {
				break
			}
		}
		l.Close()
		out := b.String()
		time.Sleep(2 * time.Millisecond)
		assert.Equal(t, out, b.String(), "round %d: a line written after Close", round)
		require.NotEmpty(t, out, "round %d: no line in 5 s", round)
		for _, s := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			assert.Regexp(t, line, s, fmt.Sprintf("round %d", round))
		}
	}
}
