package execenv

import (
	"context"
	"fmt"
	"os"
)

// workingDirFor returns path resolved, first creating the working
// directory when path is the working directory itself (see ensureDir):
// reads of anything else find what is there, and a directory not yet
// created holds nothing.
func (l *Local) workingDirFor(path string) (string, error) {
	p := l.resolve(path)
	if p == l.cfg.WorkingDir {
		return p, l.ensureDir()
	}
	return p, nil
}

// ensureDir creates the working directory of a CreateOnFirstUse
// environment, once: after a success it costs an atomic load, after a
// failure the next operation tries again.
func (l *Local) ensureDir() error {
	if !l.cfg.CreateOnFirstUse || l.dirReady.Load() {
		return nil
	}
	l.dirMu.Lock()
	defer l.dirMu.Unlock()
	if l.dirReady.Load() {
		return nil
	}
	if err := os.MkdirAll(l.cfg.WorkingDir, 0o755); err != nil {
		return fmt.Errorf("execenv: create working directory: %w", err)
	}
	l.dirReady.Store(true)
	return nil
}

// ready checks ctx, then makes sure the working directory exists: every
// operation but the reads starts with it.
func (l *Local) ready(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.ensureDir()
}
