package tools

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

func TestShell(t *testing.T) {
	b := setup(t)
	b.write(t, "sub/marker", nil)
	tests := []struct {
		name    string
		args    args
		isError bool
		want    []string
	}{
		{"success", args{"command": "echo hello"}, false, []string{"Exit code: 0\nDuration: ", "Output:\nhello\n"}},
		{"exit code", args{"command": "echo oops >&2; exit 3"}, true, []string{"Exit code: 3", "Output (stderr):\noops"}},
		{"workdir", args{"command": "ls", "workdir": "sub"}, false, []string{"marker"}},
		{"invalid utf-8", args{"command": `printf 'a\377\376b'`}, false, []string{"a\uFFFDb"}},
		{"empty command refused by schema", args{"command": ""}, true, []string{"at /command"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.call(t, "shell", tt.args)
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v: %q", res.IsError, res.Content)
			}
			if !utf8.ValidString(res.Content) {
				t.Fatalf("content is not valid UTF-8: %q", res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q lacks %q", res.Content, w)
				}
			}
		})
	}
}

// timingOut calls the shell tool with a command that prints marker once it runs and then
// outlasts its timeout, first with a timeout of 300ms (see testenv.UntilStarted). call gets
// the timeout in milliseconds; the result and that timeout are returned.
func timingOut(t *testing.T, marker string, call func(ms int) Result) (Result, int) {
	t.Helper()
	var res Result
	timeout := testenv.UntilStarted(t, 300*time.Millisecond, 15*time.Second, func(timeout time.Duration) bool {
		res = call(int(timeout.Milliseconds()))
		return strings.Contains(res.Content, marker)
	})
	return res, int(timeout.Milliseconds())
}

func TestShellTimeoutKeepsPartialOutput(t *testing.T) {
	b := setup(t)
	res, ms := timingOut(t, "started", func(ms int) Result {
		return b.call(t, "shell", args{"command": "echo started; sleep 30", "timeout_ms": ms})
	})
	want := fmt.Sprintf("[ERROR: Command timed out after %dms. Partial output is shown above.\n"+
		"You can retry with a longer timeout by setting the timeout_ms parameter.]", ms)
	if !res.IsError || !strings.Contains(res.Content, "started") || !strings.Contains(res.Content, want) {
		t.Fatalf("timed-out call: IsError %v, content %q; want the partial output and %q", res.IsError, res.Content, want)
	}
}

func TestShellSessionTimeoutAndStreaming(t *testing.T) {
	b := setup(t)
	var mu sync.Mutex
	var streamed strings.Builder
	var opts ExecOptions
	res, ms := timingOut(t, "line1\né\n", func(ms int) Result {
		mu.Lock()
		streamed.Reset()
		mu.Unlock()
		opts = ExecOptions{
			Settings: Settings{DefaultCommandTimeoutMs: ms, MaxCommandTimeoutMs: 2 * ms},
			OnOutput: func(s string) { mu.Lock(); streamed.WriteString(s); mu.Unlock() },
		}
		return b.callOpts(t, "shell", args{"command": "printf 'line1\\n'; printf 'é\\n'; sleep 30"}, opts)
	})
	if !res.IsError || !strings.Contains(res.Content, fmt.Sprintf("timed out after %dms", ms)) {
		t.Fatalf("session default timeout of %dms not applied: %q", ms, res.Content)
	}
	mu.Lock()
	got := streamed.String()
	mu.Unlock()
	if !strings.HasPrefix(got, "line1\né\n") {
		t.Fatalf("streamed %q", got)
	}
	res = b.callOpts(t, "shell", args{"command": "sleep 30", "timeout_ms": 60_000}, opts)
	if !strings.Contains(res.Content, fmt.Sprintf("timed out after %dms", 2*ms)) {
		t.Fatalf("session maximum of %dms not applied: %q", 2*ms, res.Content)
	}
}

func TestShellLongOutputIsTruncated(t *testing.T) {
	b := setup(t)
	res := b.call(t, "shell", args{"command": "seq 1 1000"})
	if res.IsError || !res.Truncated || !strings.Contains(res.Content, "lines omitted ...]") {
		t.Fatalf("result = %+v", res)
	}
	if !strings.Contains(res.Full, "\n500\n") || strings.Contains(res.Content, "\n500\n") {
		t.Fatal("Full should keep every line and Content should drop the middle")
	}
}
