package tools

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

func TestStreamerNeverSplitsUTF8(t *testing.T) {
	var got []string
	on := streamer(func(s string) { got = append(got, s) })
	euro := []byte("€") // 3 bytes
	on(execenv.Stdout, append([]byte("a"), euro[:1]...))
	on(execenv.Stderr, []byte("err"))
	on(execenv.Stdout, euro[1:2])
	on(execenv.Stdout, append(euro[2:], 'b'))
	want := []string{"a", "err", "€b"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("chunks = %q, want %q", got, want)
	}
}

func TestCompleteUTF8(t *testing.T) {
	tests := []struct {
		in   []byte
		want int
	}{
		{[]byte("abc"), 3},
		{[]byte("a\xe2\x82"), 1},
		{[]byte("a\xe2\x82\xac"), 4},
		{[]byte("a\xf0"), 1},
		{[]byte("a\xff"), 2}, // invalid, not incomplete: passed through
		{nil, 0},
	}
	for _, tt := range tests {
		if got := completeUTF8(tt.in); got != tt.want {
			t.Errorf("completeUTF8(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestFormatExec(t *testing.T) {
	tests := []struct {
		name string
		res  execenv.ExecResult
		want string
	}{
		{"stdout only", execenv.ExecResult{Stdout: "hi\n", Duration: 1500 * time.Microsecond}, "Exit code: 0\nDuration: 2ms\nOutput:\nhi\n"},
		{"nothing", execenv.ExecResult{ExitCode: 3}, "Exit code: 3\nDuration: 0s\nOutput: (none)"},
		{"both", execenv.ExecResult{Stdout: "out", Stderr: "err\n", ExitCode: 1}, "Exit code: 1\nDuration: 0s\nOutput:\nout\nStderr:\nerr\n"},
		{"invalid utf8", execenv.ExecResult{Stdout: "a\xffb"}, "Exit code: 0\nDuration: 0s\nOutput:\na\uFFFDb"},
	}
	for _, tt := range tests {
		if got := FormatExec(tt.res); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestShellTimeout(t *testing.T) {
	tests := []struct {
		req  int
		s    Settings
		want time.Duration
	}{
		{0, Settings{}, 10 * time.Second},
		{0, Settings{DefaultCommandTimeoutMs: 120_000}, 2 * time.Minute},
		{5000, Settings{DefaultCommandTimeoutMs: 120_000}, 5 * time.Second},
		{3_600_000, Settings{}, 10 * time.Minute},
		{90_000, Settings{MaxCommandTimeoutMs: 60_000}, time.Minute},
	}
	for _, tt := range tests {
		if got := shellTimeout(tt.req, tt.s); got != tt.want {
			t.Errorf("shellTimeout(%d, %+v) = %s, want %s", tt.req, tt.s, got, tt.want)
		}
	}
}

func TestHTMLToText(t *testing.T) {
	doc := `<html><head><title>x</title><style>p{}</style></head><body><script>alert(1)</script>
<h1>Title &amp; more</h1><p>First   para<br>next&nbsp;line</p><!-- hidden --><ul><li>one</li><li>two</li></ul></body></html>`
	want := "Title & more\n\nFirst para\nnext line\n\none\n\ntwo"
	if got := HTMLToText(doc); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
