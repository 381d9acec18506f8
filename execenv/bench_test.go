package execenv_test

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

func benchExecTrue(b *testing.B, env execenv.Environment) {
	ctx := context.Background()
	if err := env.Initialize(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := env.Exec(ctx, execenv.ExecRequest{Command: "true"})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("true: %+v, %v", res, err)
		}
	}
}

// BenchmarkExecTrueLocal is the overhead of one command locally.
func BenchmarkExecTrueLocal(b *testing.B) {
	benchExecTrue(b, newLocal(b, execenv.LocalConfig{WorkingDir: b.TempDir()}))
}

// BenchmarkExecTrueSSH is the overhead of one command over a reused connection.
func BenchmarkExecTrueSSH(b *testing.B) {
	srv := startSSH(b)
	benchExecTrue(b, newSSH(b, srv.Config(b.TempDir())))
}

// grepBenchPatterns: a selective and a common pattern.
var grepBenchPatterns = map[string]string{"selective": "ErrUnexpectedEOF", "common": `func \(`}

// BenchmarkGrepGoSource greps $(go env GOROOT)/src through execenv (rg and
// the Go search) and with rg run directly; compare rg-direct with execenv-rg
// for the overhead of the environment.
func BenchmarkGrepGoSource(b *testing.B) {
	requireRipgrep(b)
	root := filepath.Join(goroot(b), "src")
	rg := newLocal(b, execenv.LocalConfig{WorkingDir: root})
	gosearch := newLocal(b, execenv.LocalConfig{WorkingDir: root, NoRipgrep: true})
	ctx := context.Background()
	for name, pattern := range grepBenchPatterns {
		b.Run(name+"/rg-direct", func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command("rg", "-n", "--no-heading", "--", pattern, root)
				cmd.Stdout = io.Discard
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
		for envName, env := range map[string]*execenv.Local{"execenv-rg": rg, "execenv-go": gosearch} {
			b.Run(name+"/"+envName, func(b *testing.B) {
				for b.Loop() {
					if _, err := env.Grep(ctx, execenv.GrepRequest{Pattern: pattern}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkGlobGoSource finds **/*_test.go under $(go env GOROOT)/src
// locally and over SSH (listing over SFTP).
func BenchmarkGlobGoSource(b *testing.B) {
	root := filepath.Join(goroot(b), "src")
	srv := startSSH(b)
	envs := map[string]execenv.Environment{
		"local": newLocal(b, execenv.LocalConfig{WorkingDir: root}),
		"ssh":   newSSH(b, srv.Config(root)),
	}
	ctx := context.Background()
	for name, env := range envs {
		if err := env.Initialize(ctx); err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				res, err := env.Glob(ctx, execenv.GlobRequest{Pattern: "**/*_test.go"})
				if err != nil || res.Total == 0 {
					b.Fatalf("%+v, %v", res.Total, err)
				}
			}
		})
	}
}
