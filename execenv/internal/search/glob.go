package search

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/execenv/internal/pathmatch"
)

// DefaultGlobLimit is GlobRequest.Limit when zero.
const DefaultGlobLimit = 1000

// GlobPlan is a validated GlobRequest.
type GlobPlan struct {
	re     *regexp.Regexp
	prefix string // leading literal directories of the pattern, where the walk starts
	limit  int
}

// PlanGlob validates req against the base directory. Patterns are matched
// against paths relative to base: "*.go" matches files directly in base,
// "**/*.go" at any depth. An absolute pattern must lie under base.
func PlanGlob(req GlobRequest, base string) (GlobPlan, error) {
	p := GlobPlan{limit: req.Limit}
	if p.limit == 0 {
		p.limit = DefaultGlobLimit
	}
	if p.limit < 0 {
		return p, fmt.Errorf("execenv: glob Limit must be >= 0, got %d", req.Limit)
	}
	pat := req.Pattern
	if pat == "" {
		return p, fmt.Errorf("execenv: glob pattern is empty; give one such as \"**/*.go\"")
	}
	if path.IsAbs(pat) {
		rel, ok := pathmatch.RelUnder(base, path.Clean(pat))
		if !ok {
			return p, fmt.Errorf("execenv: glob pattern %q is absolute but not under the search directory %q; make it relative", pat, base)
		}
		pat = rel
	}
	pat = strings.TrimPrefix(pat, "./")
	re, err := pathmatch.CompileGlob(pat)
	if err != nil {
		return p, fmt.Errorf("execenv: glob pattern %q is invalid: %v", req.Pattern, err)
	}
	p.re = re
	segs := strings.Split(pat, "/")
	var lit []string
	for _, s := range segs[:len(segs)-1] {
		if s == "" || s == "." || s == ".." || pathmatch.HasGlobMeta(s) {
			break
		}
		lit = append(lit, s)
	}
	p.prefix = strings.Join(lit, "/")
	return p, nil
}

// globHit is one matching file.
type globHit struct {
	rel   string
	mtime time.Time
}

// GlobTree walks base (honouring .gitignore, skipping .git, as grep does)
// and keeps the newest limit matches.
func GlobTree(ctx context.Context, fsys FS, base string, p GlobPlan) (GlobResult, error) {
	start := base
	if p.prefix != "" {
		start = fsys.Join(base, p.prefix)
	}
	hits := newTopN(p.limit, func(a, b globHit) bool {
		if !a.mtime.Equal(b.mtime) {
			return a.mtime.After(b.mtime)
		}
		return a.rel < b.rel
	})
	var mu sync.Mutex // guards hits: walk calls visit concurrently
	w := &walker{fsys: fsys, root: start}
	err := w.walk(ctx, func(abs string, d fs.DirEntry) error {
		rel, ok := pathmatch.RelUnder(base, abs)
		if !ok || !p.re.MatchString(rel) {
			return nil
		}
		var mtime time.Time
		if info, err := d.Info(); err == nil {
			mtime = info.ModTime()
		}
		mu.Lock()
		hits.add(globHit{rel: rel, mtime: mtime})
		mu.Unlock()
		return nil
	})
	if err != nil {
		return GlobResult{}, err
	}
	res := GlobResult{Paths: []string{}, Total: hits.seen, Truncated: hits.truncated()}
	for _, h := range hits.sorted() {
		res.Paths = append(res.Paths, h.rel)
	}
	return res, nil
}
