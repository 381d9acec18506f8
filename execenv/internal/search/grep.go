package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/agentfleet/agentfleet/execenv/internal/pathmatch"
)

// DefaultGrepMaxResults is GrepRequest.MaxResults when zero.
const DefaultGrepMaxResults = 100

// binaryProbeSize is how much of a file is checked for a NUL byte before it
// is searched, matching ripgrep's first buffer: a file with a NUL there is
// skipped as binary; a NUL later stops the search of that file.
const binaryProbeSize = 64 << 10

// GrepPlan is a validated GrepRequest.
type GrepPlan struct {
	pattern string
	re      *regexp.Regexp
	pre     *regexp.Regexp // multi-line form run on a whole file to skip files without a match; nil: none
	glob    string
	fold    bool
	mode    Mode
	max     int
}

// PlanGrep validates req; the regular expression is compiled with Go's RE2
// so every implementation rejects the same patterns with the same message.
func PlanGrep(req GrepRequest) (GrepPlan, error) {
	p := GrepPlan{pattern: req.Pattern, glob: req.Glob, fold: req.CaseInsensitive, mode: req.Mode, max: req.MaxResults}
	if p.mode == "" {
		p.mode = Content
	}
	switch p.mode {
	case Content, FilesWithMatches, Count:
	default:
		return p, fmt.Errorf("execenv: grep mode must be %q, %q or %q, got %q", Content, FilesWithMatches, Count, string(p.mode))
	}
	if p.max == 0 {
		p.max = DefaultGrepMaxResults
	}
	if p.max < 0 {
		return p, fmt.Errorf("execenv: grep MaxResults must be >= 0, got %d", req.MaxResults)
	}
	expr := req.Pattern
	if p.fold {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return p, fmt.Errorf("execenv: grep pattern %q is not a valid regular expression (RE2 syntax, as used by ripgrep): %v", req.Pattern, err)
	}
	p.re = re
	if !strings.Contains(req.Pattern, `\A`) && !strings.Contains(req.Pattern, `\z`) {
		// A match within one line is also a match of (?m)pattern in the
		// whole file (^ and $ then match at line ends), so a file where the
		// latter fails has no matching line.
		p.pre, _ = regexp.Compile("(?m)" + expr)
	}
	if _, err := pathmatch.NewOverrideSet("/", req.Glob); err != nil {
		return p, fmt.Errorf("execenv: grep glob %q is invalid: %v", req.Glob, err)
	}
	return p, nil
}

// Collector gathers rows from any search and keeps the first max by
// path then line. Safe for concurrent use.
type Collector struct {
	mu      sync.Mutex
	mode    Mode
	matches *topN[GrepMatch]
	files   *topN[string]
	counts  *topN[GrepCountRow]
}

func NewCollector(p GrepPlan) *Collector {
	return &Collector{
		mode: p.mode,
		matches: newTopN(p.max, func(a, b GrepMatch) bool {
			if a.Path != b.Path {
				return a.Path < b.Path
			}
			return a.Line < b.Line
		}),
		files:  newTopN(p.max, func(a, b string) bool { return a < b }),
		counts: newTopN(p.max, func(a, b GrepCountRow) bool { return a.Path < b.Path }),
	}
}

func (c *Collector) addMatch(path string, line int, text []byte) {
	m := GrepMatch{Path: path, Line: line, Text: cleanLine(text)}
	c.mu.Lock()
	c.matches.add(m)
	c.mu.Unlock()
}

func (c *Collector) addFile(path string) {
	c.mu.Lock()
	c.files.add(path)
	c.mu.Unlock()
}

func (c *Collector) addCount(path string, n int) {
	c.mu.Lock()
	c.counts.add(GrepCountRow{Path: path, Count: n})
	c.mu.Unlock()
}

// Result returns the rows of the mode, sorted.
func (c *Collector) Result() GrepResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.mode {
	case FilesWithMatches:
		return GrepResult{Files: c.files.sorted(), Truncated: c.files.truncated()}
	case Count:
		return GrepResult{Counts: c.counts.sorted(), Truncated: c.counts.truncated()}
	}
	return GrepResult{Matches: c.matches.sorted(), Truncated: c.matches.truncated()}
}

// cleanLine drops the line terminator and makes the text valid UTF-8.
func cleanLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte("\n"))
	b = bytes.TrimSuffix(b, []byte("\r"))
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// GrepTree is the pure-Go search of a directory: the walker feeds files to
// GOMAXPROCS searchers.
func GrepTree(ctx context.Context, fsys FS, root string, p GrepPlan, c *Collector) error {
	ov, err := pathmatch.NewOverrideSet(root, p.glob, "!.git")
	if err != nil {
		return err
	}
	w := &walker{fsys: fsys, root: root, overrides: ov}
	files := make(chan string, 64)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for abs := range files {
				rel, _ := pathmatch.RelUnder(root, abs)
				_ = GrepFile(fsys, abs, rel, p, c)
			}
		})
	}
	err = w.walk(ctx, func(abs string, _ fs.DirEntry) error {
		select {
		case files <- abs:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	close(files)
	wg.Wait()
	return err
}

// prefilterMax is the largest file read whole for the prefilter; larger
// files are streamed line by line.
const prefilterMax = 64 << 20

// GrepFile searches one file line by line, reporting rows under display.
func GrepFile(fsys FS, abs, display string, p GrepPlan, c *Collector) error {
	f, err := fsys.Open(abs)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, prefilterMax+1))
	if err != nil {
		return err
	}
	if bytes.IndexByte(data[:min(len(data), binaryProbeSize)], 0) >= 0 {
		return nil
	}
	src := io.Reader(bytes.NewReader(data))
	if len(data) > prefilterMax {
		src = io.MultiReader(src, f)
	} else if p.pre != nil && !p.pre.Match(data) {
		return nil
	}
	count := grepLines(bufio.NewReaderSize(src, binaryProbeSize), display, p, c)
	switch {
	case count == 0:
	case p.mode == FilesWithMatches:
		c.addFile(display)
	case p.mode == Count:
		c.addCount(display, count)
	}
	return nil
}

// grepLines matches line by line and returns the number of matching lines
// (stopping at the first for files_with_matches, and at a NUL byte).
func grepLines(r *bufio.Reader, display string, p GrepPlan, c *Collector) int {
	count := 0
	for lineNo := 1; ; lineNo++ {
		line, err := readLine(r)
		if len(line) > 0 {
			if bytes.IndexByte(line, 0) >= 0 {
				return count
			}
			if p.re.Match(bytes.TrimSuffix(line, []byte("\n"))) {
				count++
				switch p.mode {
				case FilesWithMatches:
					return count
				case Content:
					c.addMatch(display, lineNo, line)
				}
			}
		}
		if err != nil {
			return count
		}
	}
}

// readLine returns the next line including its '\n', however long.
func readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	buf := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = r.ReadSlice('\n')
		buf = append(buf, line...)
	}
	return buf, err
}

// readField returns bytes up to and excluding delim.
func readField(r *bufio.Reader, delim byte) ([]byte, error) {
	b, err := r.ReadSlice(delim)
	if errors.Is(err, bufio.ErrBufferFull) {
		buf := append([]byte(nil), b...)
		for errors.Is(err, bufio.ErrBufferFull) {
			b, err = r.ReadSlice(delim)
			buf = append(buf, b...)
		}
		b = buf
	}
	return bytes.TrimSuffix(b, []byte{delim}), err
}

// drainTo keeps reading r so that a producer never blocks on a full pipe.
func drainTo(r io.Reader) { _, _ = io.Copy(io.Discard, r) }
