package patch

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []FileOp
	}{
		{
			name: "add",
			text: "*** Begin Patch\n*** Add File: a/b.txt\n+one\n+two\n*** End Patch\n",
			want: []FileOp{{Op: OpAdd, Path: "a/b.txt", Contents: "one\ntwo\n", Line: 2}},
		},
		{
			name: "delete and update with move, hint and eof",
			text: "*** Begin Patch\n*** Delete File: x\n*** Update File: y\n*** Move to: z\n@@ func main() {\n ctx\n-old\n+new\n*** End of File\n*** End Patch",
			want: []FileOp{
				{Op: OpDelete, Path: "x", Line: 2},
				{Op: OpUpdate, Path: "y", MoveTo: "z", Line: 3, Chunks: []Chunk{{Hint: "func main() {", Old: []string{"ctx", "old"}, New: []string{"ctx", "new"}, EOF: true}}},
			},
		},
		{
			name: "first hunk without @@ and two hunks",
			text: "*** Begin Patch\n*** Update File: f\n-a\n+b\n@@\n c\n\n-d\n*** End Patch",
			want: []FileOp{{Op: OpUpdate, Path: "f", Line: 2, Chunks: []Chunk{
				{Old: []string{"a"}, New: []string{"b"}},
				{Old: []string{"c", "", "d"}, New: []string{"c", ""}},
			}}},
		},
		{
			name: "crlf, padded markers and heredoc",
			text: "<<'EOF'\r\n  *** Begin Patch \r\n  *** Update File: f\r\n@@\r\n-a\r\n+b\r\n *** End Patch\r\nEOF\r\n",
			want: []FileOp{{Op: OpUpdate, Path: "f", Line: 3, Chunks: []Chunk{{Old: []string{"a"}, New: []string{"b"}}}}},
		},
		{
			name: "unified diff range after @@ is ignored",
			text: "*** Begin Patch\n*** Update File: f\n@@ -1,2 +1,2 @@\n-a\n+b\n*** End Patch",
			want: []FileOp{{Op: OpUpdate, Path: "f", Line: 2, Chunks: []Chunk{{Old: []string{"a"}, New: []string{"b"}}}}},
		},
		{
			name: "empty patch parses to nothing",
			text: "*** Begin Patch\n*** End Patch\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.text)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if !reflect.DeepEqual(p.Files, tt.want) {
				t.Fatalf("got  %#v\nwant %#v", p.Files, tt.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
		line             int
	}{
		{"no begin", "*** Update File: f\n*** End Patch", "first line of the patch must be", 1},
		{"no end", "*** Begin Patch\n*** Delete File: f\n", "last line of the patch must be", 2},
		{"bad header", "*** Begin Patch\n*** Frobnicate File: foo\n*** End Patch", "not a valid file operation header", 2},
		{"empty update", "*** Begin Patch\n*** Update File: foo\n*** End Patch", "has no hunks", 2},
		{"bad hunk line", "*** Begin Patch\n*** Update File: foo\n@@\nxyz\n*** End Patch", "unexpected line \"xyz\"", 4},
		{"second hunk needs @@", "*** Begin Patch\n*** Update File: foo\n-a\n+b\n\nxyz\n*** End Patch", "expected a hunk starting with @@", 6},
		{"empty hunk", "*** Begin Patch\n*** Update File: foo\n@@\n*** End of File\n*** End Patch", "hunk has no lines", 4},
		{"no path", "*** Begin Patch\n*** Delete File: \n*** End Patch", "names no path", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.text)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse error = %v, want *ParseError", err)
			}
			if !strings.Contains(pe.Message, tt.want) || pe.Line != tt.line {
				t.Fatalf("error = %q at line %d, want %q at line %d", pe.Message, pe.Line, tt.want, tt.line)
			}
		})
	}
}
