package execenv_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
	"github.com/agentfleet/agentfleet/execenv/sshtest"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// startSSH starts an sshd whose sessions carry the conformance probe variables.
func startSSH(t testing.TB) *sshtest.Server {
	t.Helper()
	return sshtest.StartWith(t, sshtest.Options{SetEnv: execenvtest.ProbeEnv})
}

func newSSH(t testing.TB, cfg execenv.SSHConfig) *execenv.SSH {
	t.Helper()
	env, err := execenv.NewSSH(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return env
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestSSHConformance(t *testing.T) {
	srv := startSSH(t)
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		return newSSH(t, srv.Config(dir))
	})
}

func TestSSHConformanceWithoutRipgrep(t *testing.T) {
	srv := startSSH(t)
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		cfg := srv.Config(dir)
		cfg.NoRipgrep = true
		return newSSH(t, cfg)
	})
}

// writeKnownHosts records key for the server's address in a new file.
func writeKnownHosts(t *testing.T, srv *sshtest.Server, key ssh.PublicKey) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.Addr())}, key) + "\n"
	if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSSHHostKeyChangedIsRefused(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ssh.NewPublicKey(pub)
	cfg := srv.Config(t.TempDir())
	cfg.KnownHostsFile = writeKnownHosts(t, srv, other)
	err = newSSH(t, cfg).Initialize(testCtx(t))
	var he *execenv.HostKeyError
	if !errors.As(err, &he) || !he.Changed {
		t.Fatalf("Initialize with a changed host key: %v, want a HostKeyError with Changed", err)
	}
	msg := err.Error()
	for _, want := range []string{"CHANGED", "ssh-keygen -R '[127.0.0.1]:" + strconv.Itoa(srv.Port) + "'", "ssh-keyscan -p " + strconv.Itoa(srv.Port), cfg.KnownHostsFile} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func TestSSHUnknownHostIsRefused(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	cfg := srv.Config(t.TempDir())
	cfg.KnownHostsFile = filepath.Join(t.TempDir(), "empty_known_hosts")
	if err := os.WriteFile(cfg.KnownHostsFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := newSSH(t, cfg).Initialize(testCtx(t))
	var he *execenv.HostKeyError
	if !errors.As(err, &he) || he.Changed {
		t.Fatalf("Initialize with an unknown host: %v, want a HostKeyError without Changed", err)
	}
	if want := "ssh-keyscan -p " + strconv.Itoa(srv.Port) + " 127.0.0.1 >> " + cfg.KnownHostsFile; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not tell the user to run %q", err, want)
	}
}

func TestSSHInsecureIgnoreHostKeyWarns(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	var logs bytes.Buffer
	cfg := srv.Config(t.TempDir())
	cfg.KnownHostsFile, cfg.InsecureIgnoreHostKey = "", true
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	env := newSSH(t, cfg)
	if err := env.Initialize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "NOT checked") {
		t.Fatalf("no warning logged: %q", logs.String())
	}
}

func TestSSHReconnectsAfterConnectionLoss(t *testing.T) {
	t.Parallel()
	srv := sshtest.Start(t)
	env := newSSH(t, srv.Config(t.TempDir()))
	ctx := testCtx(t)
	if err := env.WriteFile(ctx, "f.txt", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	execenv.DropConnection(env)
	if got, err := env.ReadFile(ctx, "f.txt"); err != nil || string(got) != "kept" {
		t.Fatalf("ReadFile after the connection dropped: %q, %v", got, err)
	}
	execenv.DropConnection(env)
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: "echo again"})
	if err != nil || res.Stdout != "again\n" {
		t.Fatalf("Exec after the connection dropped: %+v, %v", res, err)
	}
}

func TestSSHConfigValidate(t *testing.T) {
	cases := []struct {
		cfg  execenv.SSHConfig
		want string
	}{
		{execenv.SSHConfig{KeyFile: "k", KnownHostsFile: "h"}, "SSHConfig.Host"},
		{execenv.SSHConfig{Host: "h", KnownHostsFile: "h"}, "KeyFile, Key or UseAgent"},
		{execenv.SSHConfig{Host: "h", KeyFile: "k", KnownHostsFile: "h", WorkingDir: "rel"}, "SSHConfig.WorkingDir"},
		{execenv.SSHConfig{Host: "h", KeyFile: "k", KnownHostsFile: "h", EnvPolicy: "some"}, "SSHConfig.EnvPolicy"},
		{execenv.SSHConfig{Host: "h", KeyFile: "k", KnownHostsFile: "h", DefaultTimeout: time.Hour}, "SSHConfig.DefaultTimeout"},
		{execenv.SSHConfig{Host: "h", KeyFile: "k", KnownHostsFile: "h", Port: 70000}, "SSHConfig.Port"},
	}
	for _, c := range cases {
		_, err := execenv.NewSSH(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSSH(%+v) error = %v, want one naming %q", c.cfg, err, c.want)
		}
	}
}

func TestSSHLoginNoiseIsNotOutput(t *testing.T) {
	t.Parallel()
	noise := filepath.Join(t.TempDir(), "noise.sh")
	// BASH_ENV is read by every non-interactive bash; only the login shell prints.
	script := "if [ -z \"$NOISE_DONE\" ]; then export NOISE_DONE=1; echo 'Welcome to the host'; echo '42'; fi\n"
	if err := os.WriteFile(noise, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := sshtest.StartWith(t, sshtest.Options{SetEnv: map[string]string{"BASH_ENV": noise}})
	env := newSSH(t, srv.Config(t.TempDir()))
	ctx := testCtx(t)
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: "echo out"})
	if err != nil || res.Stdout != "out\n" {
		t.Fatalf("stdout %q, %v: the login greeting must not be taken for output", res.Stdout, err)
	}
	// On a loaded machine the session may not reach "ready" within a short timeout.
	testenv.UntilStarted(t, 2*time.Second, 30*time.Second, func(timeout time.Duration) bool {
		res, err = env.Exec(ctx, execenv.ExecRequest{Command: "trap '' TERM; echo ready; sleep 300", Timeout: timeout})
		return err != nil || res.Stdout != ""
	})
	if err != nil || !res.TimedOut || res.ExitCode != -1 || res.Stdout != "ready\n" {
		t.Fatalf("timeout after a login greeting: %+v, %v", res, err)
	}
}
