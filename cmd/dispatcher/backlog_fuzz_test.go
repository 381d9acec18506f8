package main

import (
	"bytes"
	"testing"
)

// FuzzReadBacklog: any backlog file is read without a panic; every line
// is either accepted as a spec that passes the local check, or reported
// once, and accepted lines keep their numbers in order.
func FuzzReadBacklog(f *testing.F) {
	f.Add([]byte("{\"prompt\":\"fix a\",\"profile\":\"anthropic\"}\n# comment\n\n{\"prompt\":\"b\"}\n"))
	f.Add([]byte("{\"prompt\":\"x\",\"unknown\":1}\r\nnot json\n{\"prompt\":\"\"}\n"))
	f.Add([]byte("{\"prompt\":\"x\",\"limits\":{\"wall_time\":\"5m\"}}{\"prompt\":\"y\"}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		good, bad, err := readBacklog(bytes.NewReader(data))
		if err != nil {
			return // a line longer than the scanner allows: reported as a whole
		}
		lines := bytes.Count(data, []byte("\n")) + 1
		if len(good)+len(bad) > lines {
			t.Fatalf("%d accepted and %d reported from %d lines", len(good), len(bad), lines)
		}
		last := 0
		for _, g := range good {
			if g.line <= last || g.line > lines {
				t.Fatalf("accepted line numbers out of order: %d after %d", g.line, last)
			}
			last = g.line
			if err := precheck(g.spec); err != nil {
				t.Fatalf("line %d accepted but fails the check: %v", g.line, err)
			}
		}
	})
}
