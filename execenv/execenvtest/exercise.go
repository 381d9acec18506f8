package execenvtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

// ProbeEnv are variables the base environment must hold for the env
// filtering cases: the secret-looking ones must be filtered out under the
// default policy, the plain one must come through.
var ProbeEnv = map[string]string{
	"AGENTFLEET_PROBE_API_KEY": "leaked",
	"agentfleet_probe_token":   "leaked",
	"AGENTFLEET_PROBE_PLAIN":   "visible",
}

// NewEnvFunc builds an environment whose working directory is dir, with
// default configuration. Exercise initializes it and cleans it up.
type NewEnvFunc func(t *testing.T, dir string) execenv.Environment

// Exercise runs the conformance suite. Subtests run in parallel, each with
// its own environment and directory. skip names cases (as
// "Exec/IgnoresSIGTERM") an environment documents it does not promise.
func Exercise(t *testing.T, newEnv NewEnvFunc, skip ...string) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, b *bundle)
	}{
		{"Files/WriteReadCreatesParents", testWriteRead},
		{"Files/UnicodeNames", testUnicodeNames},
		{"Files/BinaryAndLarge", testBinaryAndLarge},
		{"Files/NotExist", testNotExist},
		{"Files/ListDepth", testList},
		{"Files/RemoveRename", testRemoveRename},
		{"Exec/OutputAndExitCode", testExecBasics},
		{"Exec/DirAndEnv", testExecDirEnv},
		{"Exec/MissingDir", testExecMissingDir},
		{"Exec/EnvFiltering", testEnvFiltering},
		{"Exec/InvalidUTF8", testInvalidUTF8},
		{"Exec/TimeoutKillsGroup", testTimeoutKillsGroup},
		{"Exec/IgnoresSIGTERM", testIgnoresSIGTERM},
		{"Exec/BackgroundLeftoverKilled", testBackgroundLeftover},
		{"Exec/StreamingAndCancel", testStreamingCancel},
		{"Exec/Concurrent", testConcurrent},
		{"Grep/Content", testGrepContent},
		{"Grep/Modes", testGrepModes},
		{"Grep/GlobAndCase", testGrepGlobCase},
		{"Grep/MaxResults", testGrepMax},
		{"Grep/PathAndFile", testGrepPath},
		{"Grep/BadRegex", testGrepBadRegex},
		{"Glob/NewestFirst", testGlobNewest},
		{"Glob/ManyFilesBounded", testGlobMany},
		{"Lifecycle", testLifecycle},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(skip, c.name) {
				t.Skip("this environment does not promise it (see the caller)")
			}
			t.Parallel()
			c.run(t, setup(t, newEnv))
		})
	}
}

// bundle is what a case gets: an initialized environment and a context.
type bundle struct {
	env execenv.Environment
	ctx context.Context
	dir string
}

// caseTimeout bounds one case generously for a loaded machine.
const caseTimeout = 2 * time.Minute

func setup(t *testing.T, newEnv NewEnvFunc) *bundle {
	t.Helper()
	dir := t.TempDir()
	env := newEnv(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), caseTimeout)
	t.Cleanup(cancel)
	if err := env.Initialize(ctx); err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Cleanup(context.Background()); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
	})
	return &bundle{env: env, ctx: ctx, dir: dir}
}

// write creates files (path -> content) through the environment.
func (b *bundle) write(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		if err := b.env.WriteFile(b.ctx, p, []byte(content)); err != nil {
			t.Fatalf("WriteFile(%q): %v", p, err)
		}
	}
}

// exec runs a command that must run (any exit status).
func (b *bundle) exec(t *testing.T, req execenv.ExecRequest) execenv.ExecResult {
	t.Helper()
	res, err := b.env.Exec(b.ctx, req)
	if err != nil {
		t.Fatalf("Exec(%q): %v", req.Command, err)
	}
	return res
}

// sh runs a command that must succeed and returns its stdout.
func (b *bundle) sh(t *testing.T, command string) string {
	t.Helper()
	res := b.exec(t, execenv.ExecRequest{Command: command, Timeout: time.Minute})
	if res.ExitCode != 0 {
		t.Fatalf("%q exited %d: %s", command, res.ExitCode, res.Stderr)
	}
	return res.Stdout
}
