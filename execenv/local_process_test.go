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

// TestLocalStartProcess: a started process talks over its standard input
// and output in the working directory with the request's environment, its
// standard error goes to the writer, Close ends it, and Cleanup ends one
// still running.
func TestLocalStartProcess(t *testing.T) {
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	p, err := env.StartProcess(context.Background(), execenv.ProcessRequest{
		Command: `echo "started in $PWD as $WHO" >&2; while read -r line; do echo "got $line"; done`,
		Env:     map[string]string{"WHO": "tester"}, Stderr: &stderr,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(p, "ping\n"); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(p).ReadString('\n')
	if err != nil || line != "got ping\n" {
		t.Fatalf("read %q, %v", line, err)
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

	stuck, err := env.StartProcess(context.Background(), execenv.ProcessRequest{Command: "trap '' TERM; sleep 300"})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-stuck.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("Cleanup left a started process running")
	}
	_ = stuck.Close()
}
