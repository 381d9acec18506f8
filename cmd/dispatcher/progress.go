package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

// progress draws submitted, running, done and failed on one line: redrawn
// in place on a terminal, else printed at most every 5 s.
type progress struct {
	w         io.Writer
	tty       bool
	total     int
	submitted int
	counts    map[store.TaskState]int64
	start     time.Time
	last      time.Time
}

func newProgress(w io.Writer, total int) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progress{w: w, tty: tty, total: total, start: time.Now()}
}

func (p *progress) done() int64 {
	return p.counts[store.TaskSucceeded] + p.counts[store.TaskFailed] + p.counts[store.TaskCancelled]
}

func (p *progress) finished() bool { return p.done() >= int64(p.total) }

func (p *progress) line() string {
	const width = 30
	filled := int(float64(width) * float64(p.done()) / float64(max(p.total, 1)))
	bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
	return fmt.Sprintf("[%s] submitted %d/%d  running %d  done %d  failed %d",
		bar, p.submitted, p.total, p.counts[store.TaskRunning]+p.counts[store.TaskWaiting],
		p.counts[store.TaskSucceeded], p.counts[store.TaskFailed]+p.counts[store.TaskCancelled])
}

// draw shows the line; force prints it even off a terminal.
func (p *progress) draw(force bool) {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s", p.line())
		return
	}
	if force || time.Since(p.last) >= 5*time.Second {
		fmt.Fprintln(p.w, p.line())
		p.last = time.Now()
	}
}

// finish draws the final line and ends it.
func (p *progress) finish() {
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\n", p.line())
		return
	}
	p.draw(true)
}
