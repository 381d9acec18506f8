package tools

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
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
		{"timeout", args{"command": "echo started; sleep 30", "timeout_ms": 300}, true, []string{"started", "[ERROR: Command timed out after 300ms. Partial output is shown above.\nYou can retry with a longer timeout by setting the timeout_ms parameter.]"}},
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

func TestShellSessionTimeoutAndStreaming(t *testing.T) {
	b := setup(t)
	var mu sync.Mutex
	var streamed strings.Builder
	opts := ExecOptions{
		Settings: Settings{DefaultCommandTimeoutMs: 200, MaxCommandTimeoutMs: 400},
		OnOutput: func(s string) { mu.Lock(); streamed.WriteString(s); mu.Unlock() },
	}
	res := b.callOpts(t, "shell", args{"command": "printf 'line1\\n'; printf 'é\\n'; sleep 30"}, opts)
	if !res.IsError || !strings.Contains(res.Content, "timed out after 200ms") {
		t.Fatalf("session default timeout not applied: %q", res.Content)
	}
	res = b.callOpts(t, "shell", args{"command": "sleep 30", "timeout_ms": 60_000}, opts)
	if !strings.Contains(res.Content, "timed out after 400ms") {
		t.Fatalf("session maximum not applied: %q", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := streamed.String(); !strings.HasPrefix(got, "line1\né\n") {
		t.Fatalf("streamed %q", got)
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
