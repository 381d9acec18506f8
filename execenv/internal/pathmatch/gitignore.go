package pathmatch

import (
	"bufio"
	"bytes"
	"path"
	"regexp"
	"slices"
	"strings"
)

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	re       *regexp.Regexp
	negate   bool // "!pattern": re-include
	dirOnly  bool // "pattern/": directories only
	anchored bool // contains '/': matched against the path relative to the file's directory
}

// IgnoreFile is one parsed .gitignore and the directory it applies to.
type IgnoreFile struct {
	base  string // absolute directory
	rules []ignoreRule
}

// MaxIgnoreFileSize bounds how much of a .gitignore is read.
const MaxIgnoreFileSize = 1 << 20

// ParseIgnoreFile parses gitignore syntax. Lines that do not compile are
// skipped, as git does.
func ParseIgnoreFile(base string, data []byte) *IgnoreFile {
	f := &IgnoreFile{base: base}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), MaxIgnoreFileSize)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			f.rules = append(f.rules, r)
		}
	}
	return f
}

// parseIgnoreLine parses one gitignore line.
func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimUnescapedTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	var r ignoreRule
	switch {
	case line[0] == '!':
		r.negate, line = true, line[1:]
	case strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	r.anchored = strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	re, err := CompileGlob(line)
	if err != nil {
		return ignoreRule{}, false
	}
	r.re = re
	return r, true
}

// trimUnescapedTrailingSpaces drops trailing spaces not preceded by '\'.
func trimUnescapedTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}

// Match reports whether a rule of f decides about abs (the last matching rule
// wins) and whether that decision is "ignored".
func (f *IgnoreFile) Match(abs string, isDir bool) (decided, ignored bool) {
	rel, ok := RelUnder(f.base, abs)
	if !ok {
		return false, false
	}
	name := path.Base(rel)
	for _, r := range slices.Backward(f.rules) {
		if r.dirOnly && !isDir {
			continue
		}
		subject := name
		if r.anchored {
			subject = rel
		}
		if r.re.MatchString(subject) {
			return true, !r.negate
		}
	}
	return false, false
}

// RelUnder returns abs relative to base when abs is below base.
func RelUnder(base, abs string) (string, bool) {
	if base == "/" {
		return strings.TrimPrefix(abs, "/"), abs != "/"
	}
	if !strings.HasPrefix(abs, base+"/") {
		return "", false
	}
	return abs[len(base)+1:], true
}

// IgnoreStack is the .gitignore files in force for a directory, outermost
// first. It is shared read-only by the walk; push returns a new stack.
type IgnoreStack []*IgnoreFile

// Push adds a deeper file.
func (s IgnoreStack) Push(f *IgnoreFile) IgnoreStack {
	if f == nil || len(f.rules) == 0 {
		return s
	}
	out := make(IgnoreStack, len(s), len(s)+1)
	copy(out, s)
	return append(out, f)
}

// Ignored reports whether abs is ignored: the deepest file with a matching
// rule decides.
func (s IgnoreStack) Ignored(abs string, isDir bool) bool {
	for _, v := range slices.Backward(s) {
		if decided, ign := v.Match(abs, isDir); decided {
			return ign
		}
	}
	return false
}

// OverrideSet is ripgrep's --glob semantics for the grep filter: globs in
// gitignore syntax relative to the search root; a plain glob whitelists
// (files matching no whitelist glob are skipped, directories are not), a
// "!glob" excludes; the last matching glob wins and beats .gitignore.
type OverrideSet struct {
	root      string
	rules     []ignoreRule // negate=true means whitelist here
	whitelist bool         // at least one whitelist glob
}

// NewOverrideSet builds the filter for globs (in order).
func NewOverrideSet(root string, globs ...string) (*OverrideSet, error) {
	o := &OverrideSet{root: root}
	for _, g := range globs {
		if g == "" {
			continue
		}
		exclude := strings.HasPrefix(g, "!")
		body := strings.TrimPrefix(g, "!")
		r, ok := parseIgnoreLine(body)
		if !ok {
			if _, err := CompileGlob(strings.TrimPrefix(strings.TrimRight(body, "/"), "/")); err != nil {
				return nil, err
			}
			continue
		}
		r.negate = !exclude
		if !exclude {
			o.whitelist = true
		}
		o.rules = append(o.rules, r)
	}
	return o, nil
}

// Decide returns (decided, ignored) for abs.
func (o *OverrideSet) Decide(abs string, isDir bool) (bool, bool) {
	f := IgnoreFile{base: o.root, rules: o.rules}
	if decided, ign := f.Match(abs, isDir); decided {
		return true, ign
	}
	if o.whitelist && !isDir {
		return true, true
	}
	return false, false
}
