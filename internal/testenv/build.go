package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// built holds BuildCommand's binaries, by command, for the test binary's
// life.
var built sync.Map // cmd -> *buildOnce

type buildOnce struct {
	once sync.Once
	bin  string
	err  error
}

// BuildCommand builds the module's ./cmd/<name> once per test binary (the
// tests that run it as a process share it) and returns its path; a build
// failure fails the test with go build's output.
func BuildCommand(tb testing.TB, name string) string {
	tb.Helper()
	v, _ := built.LoadOrStore(name, &buildOnce{})
	b := v.(*buildOnce)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "agentfleet-"+name+"-bin") //nolint:usetesting // shared by every test of the binary, not one test
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, name)
		_, file, _, _ := runtime.Caller(0) // internal/testenv/build.go: the module is two levels up
		cmd := exec.Command("go", "build", "-o", b.bin, "./cmd/"+name)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
		}
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.bin
}
