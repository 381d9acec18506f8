package patch

import (
	"errors"
	"strings"
	"testing"
)

func chunk(hint string, old, new []string) Chunk { return Chunk{Hint: hint, Old: old, New: new} }

func TestUpdate(t *testing.T) {
	tests := []struct {
		name    string
		content string
		chunks  []Chunk
		want    string
	}{
		{"replace one line", "a\nb\nc\n", []Chunk{chunk("", []string{"b"}, []string{"B"})}, "a\nB\nc\n"},
		{"adds trailing newline", "a", []Chunk{chunk("", []string{"a"}, []string{"x", "y"})}, "x\ny\n"},
		{"pure addition appends", "a\nb\n", []Chunk{chunk("", nil, []string{"c"})}, "a\nb\nc\n"},
		{"pure addition to empty file", "", []Chunk{chunk("", nil, []string{"c"})}, "c\n"},
		{"hint selects the second occurrence", "func a() {\n\treturn 1\n}\nfunc b() {\n\treturn 1\n}\n",
			[]Chunk{chunk("func b() {", []string{"\treturn 1"}, []string{"\treturn 2"})},
			"func a() {\n\treturn 1\n}\nfunc b() {\n\treturn 2\n}\n"},
		{"two identical hunks edit both occurrences in order", "x\ny\nx\n",
			[]Chunk{chunk("", []string{"x"}, []string{"1"}), chunk("", []string{"x"}, []string{"2"})}, "1\ny\n2\n"},
		{"trailing whitespace ignored", "a  \nb\n", []Chunk{chunk("", []string{"a", "b"}, []string{"a", "c"})}, "a\nc\n"},
		{"both ends trimmed", "    a\nb\n", []Chunk{chunk("", []string{"a"}, []string{"z"})}, "z\nb\n"},
		{"unicode punctuation", "say “hi” — now\n", []Chunk{chunk("", []string{`say "hi" - now`}, []string{"done"})}, "done\n"},
		{"eof anchors at the end", "x\nend\nx\nend\n", []Chunk{{Old: []string{"x", "end"}, New: []string{"y", "end"}, EOF: true}}, "x\nend\ny\nend\n"},
		{"crlf file keeps crlf", "a\r\nb\r\n", []Chunk{chunk("", []string{"a"}, []string{"A"})}, "A\r\nb\r\n"},
		{"trailing empty old line stands for final newline", "a\nb\n", []Chunk{chunk("", []string{"b", ""}, []string{"c", ""})}, "a\nc\n"},
		{"insert before final blank line", "a\n\n", []Chunk{chunk("", nil, []string{"b"})}, "a\nb\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Update(tt.content, tt.chunks)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestUpdateErrors(t *testing.T) {
	tests := []struct {
		name    string
		content string
		chunks  []Chunk
		want    []string
	}{
		{"missing lines", "a\nb\n", []Chunk{chunk("", []string{"zzz"}, []string{"y"})}, []string{"hunk 1", "could not find the expected lines", "zzz"}},
		{"missing hint", "a\n", []Chunk{chunk("func nope()", []string{"a"}, []string{"b"})}, []string{"could not find the @@ line \"func nope()\""}},
		{"ambiguous context", "}\nx\n}\n", []Chunk{chunk("", []string{"}"}, []string{"};"})}, []string{"occur 2 times", "lines 1, 3", "more unchanged context"}},
		{"second hunk searched after the first", "a\nb\n", []Chunk{chunk("", []string{"b"}, []string{"B"}), chunk("", []string{"a"}, []string{"A"})}, []string{"hunk 2", "searched from line 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Update(tt.content, tt.chunks)
			if _, ok := errors.AsType[*HunkError](err); !ok {
				t.Fatalf("error = %v, want *HunkError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
