package tools

import (
	"strings"
	"testing"
)

// FuzzEditMatch feeds arbitrary file contents and old/new strings to the
// edit_file matcher. It may not panic; the tolerant matches are ordered,
// disjoint byte ranges of the content (a byte that is not UTF-8 once made
// a range end past the content); an edit without replace_all replaces
// exactly one occurrence; an exact edit is a plain replacement.
func FuzzEditMatch(f *testing.F) {
	f.Add("func main() {\n\tfmt.Println(\"hi\")\n}\n", "fmt.Println(\"hi\")", "fmt.Println(\"bye\")", false)
	f.Add("a “quoted” — dash\r\nline two\r\n", "a \"quoted\" - dash\nline two", "replaced\n", false)
	f.Add("x  y\n\tx y\n", "x y", "z", true)
	f.Add("\u00a0tab\tend", " tab end ", "", false)
	f.Fuzz(func(t *testing.T, content, old, repl string, all bool) {
		prev := 0
		for _, s := range fuzzyFind(content, old) {
			if s.start < prev || s.end < s.start || s.end > len(content) {
				t.Fatalf("fuzzyFind(%q, %q) gave range [%d,%d) after %d", content, old, s.start, s.end, prev)
			}
			prev = s.end
		}
		if old == "" || old == repl {
			return
		}
		updated, n, fuzzy, err := replaceText(content, EditFileParams{OldString: old, NewString: repl, ReplaceAll: all})
		if err != nil {
			return
		}
		if n == 0 {
			t.Fatalf("replaceText(%q, %q) succeeded replacing nothing", content, old)
		}
		if !all && n != 1 {
			t.Fatalf("replaceText(%q, %q) without replace_all replaced %d occurrences", content, old, n)
		}
		if !fuzzy && !isCRLF(content) && updated != strings.ReplaceAll(content, old, repl) {
			t.Fatalf("exact edit of %q in %q gave %q", old, content, updated)
		}
	})
}
