package execenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/agentfleet/agentfleet/execenv/internal/search"
)

// Grep searches with ripgrep when it is on PATH (and not disabled), else
// with the pure-Go search; both give the same result on the same tree. A
// single file is always searched in Go.
func (l *Local) Grep(ctx context.Context, req GrepRequest) (GrepResult, error) {
	p, err := search.PlanGrep(req)
	if err != nil {
		return GrepResult{}, err
	}
	if err := l.ready(ctx); err != nil {
		return GrepResult{}, err
	}
	root := l.resolve(req.Path)
	fi, err := os.Stat(root)
	if err != nil {
		return GrepResult{}, err
	}
	c := search.NewCollector(p)
	switch {
	case !fi.IsDir():
		err = search.GrepFile(search.OS{}, root, req.Path, p, c)
	case l.rgPath != "":
		err = l.ripgrep(ctx, root, p, c)
	default:
		err = search.GrepTree(ctx, search.OS{}, root, p, c)
	}
	if err != nil {
		return GrepResult{}, err
	}
	return c.Result(), nil
}

// ripgrep runs rg in root (through Wrap when one is configured: in the
// sandbox of the commands) and parses its output.
func (l *Local) ripgrep(ctx context.Context, root string, p search.GrepPlan, c *search.Collector) error {
	w := Wrapped{Argv: append([]string{l.rgPath}, search.RipgrepArgs(p)...)}
	if l.cfg.Wrap != nil {
		var err error
		if w, err = l.cfg.Wrap(root, w.Argv, []string{}); err != nil {
			return err
		}
	}
	defer w.release()
	cmd := w.exec(ctx, root)
	w.setup(cmd)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := w.start(cmd); err != nil {
		return fmt.Errorf("execenv: start rg: %w", err)
	}
	parseErr := search.ParseRipgrep(out, c)
	waitErr := cmd.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if parseErr != nil {
		return parseErr
	}
	return ripgrepExitError(cmd.ProcessState.ExitCode(), waitErr, stderr.String())
}

// ripgrepExitError maps rg's status: 0 and 1 are fine; 2 is an error only
// when rg refused the pattern (per-file errors are skipped, as in Go). A
// 1 with a message other than rg's "No files were searched" is a wrapper
// that failed (bubblewrap's exit status is 1).
func ripgrepExitError(code int, waitErr error, stderr string) error {
	switch {
	case code == 0 || code == 1 && (strings.TrimSpace(stderr) == "" || strings.Contains(stderr, "No files were searched")):
		return nil
	case code == 2 && !strings.Contains(stderr, "regex"):
		return nil
	}
	return fmt.Errorf("execenv: rg failed (status %d): %v: %s", code, waitErr, strings.TrimSpace(stderr))
}

// Glob finds files by pattern, newest first.
func (l *Local) Glob(ctx context.Context, req GlobRequest) (GlobResult, error) {
	base := l.resolve(req.Path)
	p, err := search.PlanGlob(req, base)
	if err != nil {
		return GlobResult{}, err
	}
	if err := l.ready(ctx); err != nil {
		return GlobResult{}, err
	}
	fi, err := os.Stat(base)
	if err != nil {
		return GlobResult{}, err
	}
	if !fi.IsDir() {
		return GlobResult{}, fmt.Errorf("execenv: glob path %q is not a directory", base)
	}
	return search.GlobTree(ctx, search.OS{}, base, p)
}
