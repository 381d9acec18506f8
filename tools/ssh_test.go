package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sshtest"
	"github.com/agentfleet/agentfleet/llm"
)

// newSSHEnv connects an SSH environment to srv with dir as working directory.
func newSSHEnv(t testing.TB, srv *sshtest.Server, dir string) execenv.Environment {
	t.Helper()
	env, err := execenv.NewSSH(srv.Config(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Initialize(context.Background()); err != nil {
		t.Fatalf("Initialize over SSH: %v", err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return env
}

func TestApplyPatchConformanceSSH(t *testing.T) {
	srv := sshtest.Start(t)
	runApplyPatchConformance(t, func(t *testing.T, dir string) execenv.Environment {
		return newSSHEnv(t, srv, dir)
	})
}

func TestCoreToolsOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	b := setup(t)
	b.env = newSSHEnv(t, srv, b.dir)
	b.write(t, "a.txt", []byte("alpha\nbeta\n"))
	steps := []struct {
		tool string
		args args
		want string
	}{
		{"read_file", args{"file_path": "a.txt", "offset": 2}, "2 | beta"},
		{"edit_file", args{"file_path": "a.txt", "old_string": "beta", "new_string": "gamma"}, "replaced 1 occurrence"},
		{"shell", args{"command": "cat a.txt; exit 4"}, "Exit code: 4"},
		{"grep", args{"pattern": "gam+a"}, "a.txt:2:gamma"},
		{"glob", args{"pattern": "*.txt"}, "a.txt"},
		{"list_dir", args{}, "a.txt (12 B)"},
		{"write_file", args{"file_path": "n/b.txt", "content": "x"}, "Created n/b.txt (1 bytes)."},
	}
	for _, s := range steps {
		res := b.call(t, s.tool, s.args)
		if !strings.Contains(res.Content, s.want) {
			t.Errorf("%s over SSH: %q lacks %q", s.tool, res.Content, s.want)
		}
	}
	if got := b.read(t, "a.txt"); got != "alpha\ngamma\n" {
		t.Fatalf("a.txt = %q", got)
	}
}

// BenchmarkShellTrueSSH measures the shell tool for `true` over SSH with the
// connection reused.
func BenchmarkShellTrueSSH(b *testing.B) {
	srv := sshtest.Start(b)
	env := newSSHEnv(b, srv, b.TempDir())
	reg := Core()
	raw := json.RawMessage(`{"command":"true"}`)
	for b.Loop() {
		if res := reg.Execute(context.Background(), llm.ToolCall{Name: "shell", Arguments: raw}, env, ExecOptions{}); res.IsError {
			b.Fatal(res.Content)
		}
	}
}
