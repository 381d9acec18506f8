package tools

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

// MaxHashBytes bounds the size of a file whose content Reads hashes; a
// larger file is remembered by size and modification time only.
const MaxHashBytes = 16 << 20

// Reads remembers what one session has seen of each file (size,
// modification time and, up to MaxHashBytes, a SHA-256 of the content):
// what it read with read_file or read_many_files, and what it wrote
// itself. The file tools consult it before they change a file (see the
// package doc, "Read before write"). A session owns one Reads; it is safe
// for concurrent use (read-only calls of a round run concurrently).
type Reads struct {
	mu    sync.Mutex
	files map[string]fileState // key: absolute, cleaned path
}

// fileState is what the session last saw of one file.
type fileState struct {
	size    int64
	modTime time.Time
	hash    [sha256.Size]byte
	hashed  bool
}

// NewReads returns an empty Reads.
func NewReads() *Reads { return &Reads{files: map[string]fileState{}} }

// Seen reports whether the session has read or written path (as the
// model names it, resolved against env's working directory).
func (r *Reads) Seen(env execenv.Environment, path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.files[absPath(env, path)]
	return ok
}

// note remembers the state of path as the session just saw it. data, when
// not nil, is the whole content (hashed); else only size and time count.
func (r *Reads) note(env execenv.Environment, path string, info execenv.FileInfo, sum *[sha256.Size]byte) {
	if r == nil {
		return
	}
	s := fileState{size: info.Size, modTime: info.ModTime}
	if sum != nil {
		s.hash, s.hashed = *sum, true
	}
	r.mu.Lock()
	r.files[absPath(env, path)] = s
	r.mu.Unlock()
}

// noteWritten remembers the content the session itself just wrote to path.
func (r *Reads) noteWritten(ctx context.Context, env execenv.Environment, path string, data []byte) {
	if r == nil {
		return
	}
	info, err := env.Stat(ctx, path)
	if err != nil {
		r.forget(env, path)
		return
	}
	var sum *[sha256.Size]byte
	if len(data) <= MaxHashBytes {
		h := sha256.Sum256(data)
		sum = &h
	}
	r.note(env, path, info, sum)
}

// forget drops path (the session deleted or moved it).
func (r *Reads) forget(env execenv.Environment, path string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	delete(r.files, absPath(env, path))
	r.mu.Unlock()
}

// ErrStale is wrapped by the error a file tool returns when it refuses to
// change a file that changed since the session last read it, or that the
// session would overwrite without ever having read it.
var ErrStale = errors.New("file not read or changed since it was read")

// staleError is the refusal the model sees.
func staleError(path, why string) error {
	return fmt.Errorf("%w: %s %s. Nothing was changed; read the file again with read_file, then make your change against what it contains now", ErrStale, path, why)
}

// checkFresh returns an error wrapping ErrStale when path exists and has
// changed since the session last read or wrote it. A file the session never
// saw passes unless mustHaveRead (an overwrite of a whole existing file). A
// missing file always passes (creating is exempt). current, when not nil,
// is the file's content as the tool just read it, so it is not read twice.
func (r *Reads) checkFresh(ctx context.Context, env execenv.Environment, path string, current []byte, mustHaveRead bool) error {
	if r == nil {
		return nil
	}
	info, err := env.Stat(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || info.IsDir {
		return nil //nolint:nilerr // the tool itself reports these
	}
	r.mu.Lock()
	seen, ok := r.files[absPath(env, path)]
	r.mu.Unlock()
	if !ok {
		if mustHaveRead {
			return staleError(path, "exists and this session has not read it, so writing it would overwrite content you have not seen")
		}
		return nil
	}
	if !seen.hashed || info.Size > MaxHashBytes {
		if info.Size != seen.size || !info.ModTime.Equal(seen.modTime) {
			return staleError(path, fmt.Sprintf("has changed since you last read it (size %d -> %d bytes, modified %s)",
				seen.size, info.Size, info.ModTime.UTC().Format(time.RFC3339)))
		}
		return nil
	}
	if current == nil {
		if current, err = env.ReadFile(ctx, path); err != nil {
			return nil //nolint:nilerr // the tool itself reports it
		}
	}
	if sha256.Sum256(current) != seen.hash {
		return staleError(path, "has changed since you last read it (by a command, another agent or a hook)")
	}
	return nil
}

// absPath is the key of path: absolute and cleaned, relative paths resolved
// against env's working directory.
func absPath(env execenv.Environment, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(env.WorkingDir(), path)
}
