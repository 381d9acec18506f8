package tools

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateChars(t *testing.T) {
	const htMarker = "\n\n[WARNING: Tool output was truncated. %s characters were removed from the middle. The full output is available in the event stream. If you need to see specific parts, re-run the tool with more targeted parameters.]\n\n"
	const tailMarker = "[WARNING: Tool output was truncated. First %s characters were removed. The full output is available in the event stream.]\n\n"
	tests := []struct {
		name string
		in   string
		max  int
		mode TruncationMode
		want string
	}{
		{"under the limit", "abcdef", 6, HeadTail, "abcdef"},
		{"head tail", "abcdefghij", 4, HeadTail, "ab" + strings.Replace(htMarker, "%s", "6", 1) + "ij"},
		{"head tail odd limit", "abcdefghij", 5, HeadTail, "ab" + strings.Replace(htMarker, "%s", "5", 1) + "ij"},
		{"tail", "abcdefghij", 3, Tail, strings.Replace(tailMarker, "%s", "7", 1) + "hij"},
		{"multibyte never split", "ééééé😀😀😀", 4, HeadTail, "éé" + strings.Replace(htMarker, "%s", "4", 1) + "😀😀"},
		{"tail multibyte", "日本語テキスト", 2, Tail, strings.Replace(tailMarker, "%s", "5", 1) + "スト"},
		{"disabled", "abcdef", -1, Tail, "abcdef"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TruncateChars(tt.in, tt.max, tt.mode)
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
			if !utf8.ValidString(got) {
				t.Fatal("result is not valid UTF-8")
			}
		})
	}
}

func TestTruncateLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"under", "a\nb\nc", 3, "a\nb\nc"},
		{"even", "1\n2\n3\n4\n5\n6", 4, "1\n2\n[... 2 lines omitted ...]\n5\n6"},
		{"odd keeps more tail", "1\n2\n3\n4\n5\n6", 3, "1\n[... 3 lines omitted ...]\n5\n6"},
		{"trailing newline counts as a line", "1\n2\n3\n", 2, "1\n[... 2 lines omitted ...]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TruncateLines(tt.in, tt.max); got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestTruncateCharsBeforeLines(t *testing.T) {
	// Two 10 MB lines: a line limit alone would let them through.
	line := strings.Repeat("x", 10<<20)
	out, cut := Truncate(line+"\n"+line, Limits{MaxChars: 1000, MaxLines: 256, Mode: HeadTail})
	if !cut || utf8.RuneCountInString(out) > 1400 || !strings.Contains(out, "20970521 characters were removed from the middle") {
		t.Fatalf("cut=%v len=%d out=%.300q", cut, len(out), out)
	}
	out, cut = Truncate(strings.Repeat("l\n", 300), DefaultLimits("shell"))
	if !cut || !strings.Contains(out, "[... 45 lines omitted ...]") {
		t.Fatalf("line truncation missing: %q", out[:100])
	}
}

func TestDefaultLimits(t *testing.T) {
	tests := []struct {
		name string
		want Limits
	}{
		{"read_file", Limits{MaxChars: 50000, MaxLines: -1, Mode: HeadTail}},
		{"shell", Limits{MaxChars: 30000, MaxLines: 256, Mode: HeadTail}},
		{"grep", Limits{MaxChars: 20000, MaxLines: 200, Mode: Tail}},
		{"glob", Limits{MaxChars: 20000, MaxLines: 500, Mode: Tail}},
		{"edit_file", Limits{MaxChars: 10000, MaxLines: -1, Mode: Tail}},
		{"apply_patch", Limits{MaxChars: 10000, MaxLines: -1, Mode: Tail}},
		{"write_file", Limits{MaxChars: 1000, MaxLines: -1, Mode: Tail}},
		{"spawn_agent", Limits{MaxChars: 20000, MaxLines: -1, Mode: HeadTail}},
		{"my_custom_tool", Limits{MaxChars: 30000, MaxLines: -1, Mode: HeadTail}},
	}
	for _, tt := range tests {
		if got := DefaultLimits(tt.name); got != tt.want {
			t.Errorf("DefaultLimits(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}
