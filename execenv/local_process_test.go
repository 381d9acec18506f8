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
	talkToProcess(t, env, dir)

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

// talkToProcess starts a process in env that answers each line of its
// input, says where it runs on its standard error, and checks that it
// answers two lines in dir with the request's environment and that Close
// returns once it has exited.
func talkToProcess(t *testing.T, env execenv.ProcessStarter, dir string) {
	t.Helper()
	var stderr strings.Builder
	p, err := env.StartProcess(context.Background(), execenv.ProcessRequest{
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
}
