package execenv_test

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

// TestSSHStartProcess: a process started on the remote host talks over its
// standard input and output in the working directory with the request's
// environment, its standard error goes to the writer, closing its input
// ends it, Close ends one that ignores SIGTERM, and Cleanup ends one still
// running.
func TestSSHStartProcess(t *testing.T) {
	srv := startSSH(t)
	dir := t.TempDir()
	env := newSSH(t, srv.Config(dir))
	ctx := testCtx(t)
	var stderr strings.Builder
	p, err := env.StartProcess(ctx, execenv.ProcessRequest{
		Command: `echo "started in $PWD as $WHO" >&2; while read -r line; do echo "got $line"; done`,
		Env:     map[string]string{"WHO": "tester"}, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(p)
	for _, word := range []string{"ping", "pong"} {
		if _, err := io.WriteString(p, word+"\n"); err != nil {
			t.Fatal(err)
		}
		if line, err := out.ReadString('\n'); err != nil || line != "got "+word+"\n" {
			t.Fatalf("read %q, %v", line, err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Close returned before the process exited")
	}
	if got := stderr.String(); got != "started in "+dir+" as tester\n" {
		t.Fatalf("stderr %q", got)
	}

	stubborn, err := env.StartProcess(ctx, execenv.ProcessRequest{Command: "trap '' TERM; exec sleep 300 <&-"})
	if err != nil {
		t.Fatal(err)
	}
	_ = stubborn.Close()
	select {
	case <-stubborn.Exited():
	default:
		t.Fatal("Close returned with a process that ignores SIGTERM still running")
	}

	stuck, err := env.StartProcess(ctx, execenv.ProcessRequest{Command: "sleep 300 <&-"})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck.Exited():
	case <-time.After(30 * time.Second):
		t.Fatal("Cleanup left a started process running")
	}
	_ = stuck.Close()
}
