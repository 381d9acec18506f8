package execenv_test

import (
	"context"
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
	talkToProcess(t, env, dir)

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
