package tiedproc

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

type closed struct{ n *int }

func (c closed) Close() error { *c.n++; return nil }

// done closes once the child exited and was waited for, with the closer
// closed; a command that cannot start is an error, and nothing waits.
func TestStartWaitsAndCloses(t *testing.T) {
	n := 0
	cmd := exec.Command("sh", "-c", "exit 3")
	done, err := Start(cmd, syscall.SIGKILL, closed{&n})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("done not closed after the child exited")
	}
	if code := cmd.ProcessState.ExitCode(); code != 3 || n != 1 {
		t.Fatalf("exit %d, closed %d times; want 3 and 1", code, n)
	}
	checkTied(t, cmd, syscall.SIGKILL)
	if _, err := Start(exec.Command(os.DevNull+"/missing"), syscall.SIGKILL, nil); err == nil {
		t.Fatal("a command that cannot start gave no error")
	}
}
