package search

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// RipgrepArgs are the rg arguments that make ripgrep select the same files
// as the pure-Go walker (hidden files searched, .git skipped, .gitignore
// honoured with or without a git repository, no other ignore files) and
// print a format ParseRipgrep reads. The search root is ".", run from the
// root directory.
func RipgrepArgs(p GrepPlan) []string {
	args := []string{
		"--no-config", "--color=never", "--no-messages",
		"--hidden", "--no-require-git", "--no-ignore-dot", "--no-ignore-exclude", "--no-ignore-global",
	}
	if p.glob != "" {
		args = append(args, "--glob", p.glob)
	}
	args = append(args, "--glob", "!.git")
	if p.fold {
		args = append(args, "--ignore-case")
	} else {
		args = append(args, "--case-sensitive")
	}
	switch p.mode {
	case FilesWithMatches:
		args = append(args, "--files-with-matches", "--null")
	case Count:
		args = append(args, "--count", "--with-filename", "--null")
	default:
		args = append(args, "--line-number", "--with-filename", "--no-heading", "--null")
	}
	return append(args, "--regexp", p.pattern, "--", ".")
}

// ParseRipgrep reads rg's output (as requested by RipgrepArgs) into c.
// Lines it cannot parse are skipped.
func ParseRipgrep(out io.Reader, c *Collector) error {
	mode := c.mode
	r := bufio.NewReaderSize(out, 256<<10)
	defer drainTo(r)
	for {
		path, err := readField(r, 0)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		path = bytes.TrimLeft(path, "\n")
		rel := strings.TrimPrefix(string(path), "./")
		if mode == FilesWithMatches {
			c.addFile(rel)
			continue
		}
		rest, err := readLine(r)
		if mode == Count {
			if n, convErr := strconv.Atoi(strings.TrimSpace(string(rest))); convErr == nil {
				c.addCount(rel, n)
			}
		} else if num, text, ok := bytes.Cut(rest, []byte(":")); ok {
			if n, convErr := strconv.Atoi(string(num)); convErr == nil {
				c.addMatch(rel, n, text)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}
