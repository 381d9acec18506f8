package subdir

import (
	"context"
	"path/filepath"

	"github.com/agentfleet/agentfleet/execenv"
)

// Scope returns env working in sub: sub is taken relative to env's working
// directory unless absolute, and must be an existing directory of env (an
// error otherwise, the one of env's Stat or one saying it is not a
// directory). An empty sub or "." returns env itself.
func Scope(ctx context.Context, env execenv.Environment, sub string) (execenv.Environment, error) {
	if sub == "" || sub == "." {
		return env, nil
	}
	dir := sub
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.WorkingDir(), sub)
	}
	info, err := env.Stat(ctx, dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir {
		return nil, &notDirError{path: dir}
	}
	return subdirEnv{Environment: env, dir: filepath.Clean(dir)}, nil
}

type notDirError struct{ path string }

func (e *notDirError) Error() string { return e.path + " is not a directory" }

// subdirEnv is the parent's environment with dir as its working directory.
type subdirEnv struct {
	execenv.Environment
	dir string
}

func (e subdirEnv) abs(p string) string {
	if p == "" {
		return e.dir
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

func (e subdirEnv) WorkingDir() string { return e.dir }

func (e subdirEnv) ReadFile(ctx context.Context, p string) ([]byte, error) {
	return e.Environment.ReadFile(ctx, e.abs(p))
}

func (e subdirEnv) OpenFile(ctx context.Context, p string) (execenv.ReadCloser, error) {
	return e.Environment.OpenFile(ctx, e.abs(p))
}

func (e subdirEnv) WriteFile(ctx context.Context, p string, data []byte) error {
	return e.Environment.WriteFile(ctx, e.abs(p), data)
}

func (e subdirEnv) Stat(ctx context.Context, p string) (execenv.FileInfo, error) {
	return e.Environment.Stat(ctx, e.abs(p))
}

func (e subdirEnv) Exists(ctx context.Context, p string) (bool, error) {
	return e.Environment.Exists(ctx, e.abs(p))
}

func (e subdirEnv) List(ctx context.Context, dir string, depth int) ([]execenv.DirEntry, error) {
	return e.Environment.List(ctx, e.abs(dir), depth)
}

func (e subdirEnv) Remove(ctx context.Context, p string) error {
	return e.Environment.Remove(ctx, e.abs(p))
}

func (e subdirEnv) Rename(ctx context.Context, from, to string) error {
	return e.Environment.Rename(ctx, e.abs(from), e.abs(to))
}

func (e subdirEnv) Exec(ctx context.Context, req execenv.ExecRequest) (execenv.ExecResult, error) {
	req.Dir = e.abs(req.Dir)
	return e.Environment.Exec(ctx, req)
}

// Grep searches from the subdirectory. A file searched alone comes back
// under the path the caller gave, as from any environment, not under the
// absolute path the parent was asked about.
func (e subdirEnv) Grep(ctx context.Context, req execenv.GrepRequest) (execenv.GrepResult, error) {
	given := req.Path
	req.Path = e.abs(given)
	res, err := e.Environment.Grep(ctx, req)
	if given == "" || given == req.Path {
		return res, err
	}
	for i := range res.Matches {
		res.Matches[i].Path = asGiven(res.Matches[i].Path, req.Path, given)
	}
	for i := range res.Files {
		res.Files[i] = asGiven(res.Files[i], req.Path, given)
	}
	for i := range res.Counts {
		res.Counts[i].Path = asGiven(res.Counts[i].Path, req.Path, given)
	}
	return res, err
}

// asGiven returns given where p is the absolute path it was turned into.
func asGiven(p, abs, given string) string {
	if p == abs {
		return given
	}
	return p
}

func (e subdirEnv) Glob(ctx context.Context, req execenv.GlobRequest) (execenv.GlobResult, error) {
	req.Path = e.abs(req.Path)
	return e.Environment.Glob(ctx, req)
}

// Initialize and Cleanup belong to the parent: a child must not tear down
// the environment it shares.
func (e subdirEnv) Initialize(context.Context) error { return nil }
func (e subdirEnv) Cleanup(context.Context) error    { return nil }

func (e subdirEnv) Describe() execenv.Description {
	d := e.Environment.Describe()
	d.WorkingDir = e.dir
	return d
}
