package tools

import (
	"strings"
	"testing"
)

func TestReplaceText(t *testing.T) {
	tests := []struct {
		name      string
		content   string
		p         EditFileParams
		want      string
		n         int
		fuzzy     bool
		wantError string
	}{
		{name: "exact once", content: "a := 1\nb := 2\n", p: EditFileParams{OldString: "b := 2", NewString: "b := 3"}, want: "a := 1\nb := 3\n", n: 1},
		{name: "several without replace_all", content: "x\ny\nx\n", p: EditFileParams{OldString: "x", NewString: "z"}, wantError: "occurs 2 times (at lines 1, 3)"},
		{name: "replace_all", content: "x\ny\nx\n", p: EditFileParams{OldString: "x", NewString: "z", ReplaceAll: true}, want: "z\ny\nz\n", n: 2},
		{name: "not found", content: "abc\n", p: EditFileParams{OldString: "xyz", NewString: "q"}, wantError: "old_string was not found"},
		{name: "tabs versus spaces", content: "func f() {\n\tif x {\n\t\treturn\n\t}\n}\n",
			p:    EditFileParams{OldString: "    if x {\n        return\n    }", NewString: "if y {\n\t\treturn\n\t}"},
			want: "func f() {\n\tif y {\n\t\treturn\n\t}\n}\n", n: 1, fuzzy: true},
		{name: "trailing whitespace in file", content: "one   \ntwo\n", p: EditFileParams{OldString: "one\ntwo", NewString: "1\n2"}, want: "1\n2\n", n: 1, fuzzy: true},
		{name: "unicode punctuation", content: "msg := “don’t panic” — ok\n", p: EditFileParams{OldString: `msg := "don't panic" - ok`, NewString: `msg := "calm"`}, want: "msg := \"calm\"\n", n: 1, fuzzy: true},
		{name: "fuzzy several", content: "a  b\na b\n", p: EditFileParams{OldString: "a\tb", NewString: "c"}, wantError: "occurs 2 times (at lines 1, 2)"},
		{name: "crlf file", content: "one\r\ntwo\r\n", p: EditFileParams{OldString: "one\ntwo", NewString: "1\n2"}, want: "1\r\n2\r\n", n: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n, fuzzy, err := replaceText(tt.content, tt.p)
			if tt.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantError) {
					t.Fatalf("error = %v, want %q", err, tt.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want || n != tt.n || fuzzy != tt.fuzzy {
				t.Fatalf("got %q n=%d fuzzy=%v, want %q n=%d fuzzy=%v", got, n, fuzzy, tt.want, tt.n, tt.fuzzy)
			}
		})
	}
}
