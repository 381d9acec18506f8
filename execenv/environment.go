package execenv

import (
	"context"
	"errors"
	"time"

	"github.com/agentfleet/agentfleet/execenv/internal/search"
)

// Environment is where tools run: the files they read and write and the
// commands they execute. Local and SSH implement it; wrappers (ReadOnly,
// Logging, Scoped) decorate any implementation. It is a wide interface on
// purpose: an internal seam with one conformance suite (execenvtest.Exercise).
//
// Paths may be absolute or relative; relative paths resolve against
// WorkingDir. Missing files yield errors for which errors.Is(err,
// fs.ErrNotExist) is true, for every implementation. Every method honours ctx.
// Implementations are safe for concurrent use.
type Environment interface { //nolint:interfacebloat // the one seam of local and SSH environments, with one conformance suite (execenvtest, STYLE 4)
	// ReadFile returns the whole file.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// OpenFile streams a file, so a large file can be read in bounded memory.
	OpenFile(ctx context.Context, path string) (ReadCloser, error)
	// WriteFile replaces the file's content, creating parent directories.
	WriteFile(ctx context.Context, path string, data []byte) error
	// Stat describes one path.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// Exists reports whether path exists; errors other than not-exist are returned.
	Exists(ctx context.Context, path string) (bool, error)
	// List returns the entries under dir down to depth levels (1 = direct children),
	// sorted by path.
	List(ctx context.Context, dir string, depth int) ([]DirEntry, error)
	// Remove deletes a file or an empty directory.
	Remove(ctx context.Context, path string) error
	// Rename moves a file, creating the destination's parent directories and
	// replacing an existing destination file.
	Rename(ctx context.Context, from, to string) error

	// Exec runs a shell command (bash -c) in its own process group. A non-zero
	// exit status, a timeout or a cancellation is reported in ExecResult; the
	// error is non-nil only when the command could not be run at all.
	Exec(ctx context.Context, req ExecRequest) (ExecResult, error)

	// Grep searches file contents, honouring .gitignore.
	Grep(ctx context.Context, req GrepRequest) (GrepResult, error)
	// Glob finds files by pattern (with ** for any depth), newest first.
	Glob(ctx context.Context, req GlobRequest) (GlobResult, error)

	// Initialize prepares the environment (connects, creates the working directory).
	Initialize(ctx context.Context) error
	// Cleanup releases everything the environment holds (connections, processes).
	// It is safe to call more than once.
	Cleanup(ctx context.Context) error

	// WorkingDir is the absolute directory relative paths resolve against.
	WorkingDir() string
	// Platform is "linux", "darwin", ... of the machine where commands run.
	Platform() string
	// OSVersion is a human-readable OS version of that machine.
	OSVersion() string
	// Describe returns what another worker needs to rebuild this environment.
	Describe() Description
}

// ReadCloser is an io.ReadCloser; named here so the interface reads on its own.
type ReadCloser interface {
	Read(p []byte) (int, error)
	Close() error
}

// FileInfo describes one file or directory.
type FileInfo struct {
	Path    string    `json:"path"`
	IsDir   bool      `json:"is_dir"`
	Size    int64     `json:"size"`
	ModTime time.Time `json:"mod_time"`
}

// DirEntry is one entry of List. Name is the path relative to the listed
// directory, with '/' separators (e.g. "pkg/file.go" at depth 2).
type DirEntry struct {
	Name  string `json:"name"`
	IsDir bool   `json:"is_dir"`
	Size  int64  `json:"size"`
}

// Default and maximum command timeouts, and the default bound on retained output.
const (
	DefaultTimeout   = 10 * time.Second
	MaxTimeout       = 10 * time.Minute
	KillGrace        = 2 * time.Second
	DefaultMaxOutput = 16 << 20 // bytes kept per stream: head and tail
)

// OutputStream names the stream a chunk of command output came from.
type OutputStream int

const (
	Stdout OutputStream = iota + 1
	Stderr
)

// ExecRequest is one command to run.
type ExecRequest struct {
	Command string
	// Timeout of 0 means the environment's default (DefaultTimeout unless
	// configured); values above the environment's maximum are capped.
	Timeout time.Duration
	// Dir is the working directory; "" means WorkingDir, relative resolves against it.
	Dir string
	// Env is added to the environment the policy lets through.
	Env map[string]string
	// OnOutput, when set, receives output as it is produced. It is called from
	// one goroutine at a time and must not block for long.
	OnOutput func(stream OutputStream, chunk []byte)
}

// ExecResult is what a command did. Output beyond the environment's bound is
// cut in the middle: Stdout and Stderr keep head and tail, and OmittedBytes
// counts what was dropped.
type ExecResult struct {
	Stdout       string        `json:"stdout"`
	Stderr       string        `json:"stderr"`
	ExitCode     int           `json:"exit_code"` // -1 when killed by a signal
	TimedOut     bool          `json:"timed_out"`
	Canceled     bool          `json:"canceled"` // ctx ended before the command did
	Duration     time.Duration `json:"duration"`
	OmittedBytes int64         `json:"omitted_bytes,omitempty"`
}

// The search types are defined with the search engines they feed
// (execenv/internal/search); these names are the public ones.
type (
	// GrepMode selects what Grep reports: GrepContent (matching lines, the
	// default), GrepFilesWithMatches (one path per matching file) or
	// GrepCount (matches per file).
	GrepMode = search.Mode
	// GrepRequest is a content search. Pattern is a regular expression in the
	// syntax shared by ripgrep and Go's regexp (RE2); Path is a file or
	// directory ("" means WorkingDir); Glob keeps only files whose name or
	// relative path match; MaxResults 0 means 100 rows of the mode.
	GrepRequest = search.GrepRequest
	// GrepMatch is one matching line; Path is as given or relative to the search root.
	GrepMatch = search.GrepMatch
	// GrepCountRow is the number of matching lines in one file.
	GrepCountRow = search.GrepCountRow
	// GrepResult holds the rows of the requested mode, sorted by path then
	// line, and whether MaxResults cut them.
	GrepResult = search.GrepResult
	// GlobRequest is a file-name search: Pattern such as "**/*.go" ('**'
	// matches any number of directories), Path the base directory ("" means
	// WorkingDir), Limit 0 means 1000.
	GlobRequest = search.GlobRequest
	// GlobResult lists matching files, newest first, as paths relative to the
	// base directory, and whether Limit cut them (Total counts all matches seen).
	GlobResult = search.GlobResult
)

// Grep modes.
const (
	GrepContent          = search.Content
	GrepFilesWithMatches = search.FilesWithMatches
	GrepCount            = search.Count
)

// Defaults of the search requests.
const (
	DefaultGrepMaxResults = search.DefaultGrepMaxResults // GrepRequest.MaxResults when zero
	DefaultGlobLimit      = search.DefaultGlobLimit      // GlobRequest.Limit when zero
)

// Kind names an environment implementation.
type Kind string

const (
	KindLocal Kind = "local"
	KindSSH   Kind = "ssh"
)

// Description is the serializable form of an environment: enough for another
// worker to rebuild the same one. It never holds secrets: KeyRef names a key
// that the worker resolves from its own configuration.
type Description struct {
	Kind       Kind   `json:"kind"`
	WorkingDir string `json:"working_dir"`
	Host       string `json:"host,omitempty"`
	Port       int    `json:"port,omitempty"`
	User       string `json:"user,omitempty"`
	KeyRef     string `json:"key_ref,omitempty"`
	// Shared is true when the files are reachable from any worker (SSH, or a
	// shared volume); a local workspace that is not shared pins child tasks to
	// its worker.
	Shared bool `json:"shared,omitempty"`
}

// Errors callers branch on.
var (
	ErrReadOnly     = errors.New("execenv: the environment is read-only")
	ErrOutsideScope = errors.New("execenv: path is outside the allowed directories")
)
