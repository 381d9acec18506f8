package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// worker tool --sandbox runs a tool as a fleet task's: the shell sees its
// directory and not the host's secrets, read_file stays in the directory,
// a network wider than the configuration allows is refused, and the
// sandbox is named on stderr.
func TestWorkerToolSandbox(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	parent := t.TempDir()
	dir, secret := filepath.Join(parent, "work"), filepath.Join(parent, "worker.yaml")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secret, []byte("sandbox_network: allowlist\nsandbox_allow_hosts: [example.com]\napi_key: sk-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := execute(context.Background(), append([]string{"tool"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, errOut := run("shell", "--sandbox", "--dir", dir, "--args", `{"command":"echo made > f; cat `+secret+`; ls /root"}`)
	if code != 1 || strings.Contains(out, "sk-secret") || !strings.Contains(out, "No such file") || !strings.Contains(errOut, "sandbox: bwrap, network none") {
		t.Fatalf("shell: exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatalf("the shell's file is not in --dir: %v", err)
	}
	if code, out, _ := run("read_file", "--sandbox", "--dir", dir, "--args", `{"file_path":"`+secret+`"}`); code != 1 || !strings.Contains(out, "outside the allowed directories") {
		t.Fatalf("read_file outside --dir: exit %d: %s", code, out)
	}
	code, _, errOut = run("shell", "--sandbox", "--config", secret, "--network", "full", "--dir", dir, "--args", `{"command":"true"}`)
	if code != 1 || !strings.Contains(errOut, `spec.sandbox.network "full" is wider than the operator allows (sandbox_network: allowlist)`) {
		t.Fatalf("a network wider than the configuration: exit %d: %s", code, errOut)
	}
	code, _, errOut = run("shell", "--sandbox", "--config", secret, "--network", "allowlist", "--allow-host", "example.com", "--dir", dir, "--args", `{"command":"true"}`)
	if code != 0 || !strings.Contains(errOut, "network allowlist (1 host)") {
		t.Fatalf("an allowlist within the configuration: exit %d: %s", code, errOut)
	}
}
