package bench

import (
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"
)

// Children that have exited and been waited for count in their parent's
// tree: the tree's CPU grows by at least what they used.
func TestServerCPUCountsAWaitedChild(t *testing.T) {
	before, err := ServerCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Shell loops, each about a quarter of a second of CPU, until the
	// children have used enough to tell from a tick (a starved machine
	// gives each less).
	var child float64
	var children int
	for deadline := time.Now().Add(20 * time.Second); child < 0.05; children++ {
		if time.Now().After(deadline) {
			t.Fatalf("%d children used %.3f s of CPU in 20 s", children, child)
		}
		cmd := exec.Command("sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done")
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		child += (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	}
	after, err := ServerCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Ticks are 10 ms: allow one for each child's rounding.
	if got := after - before; got < child-0.01*float64(children) {
		t.Fatalf("the tree grew by %.3f s, less than the %.3f s its %d children used", got, child, children)
	}
}

func TestParseStat(t *testing.T) {
	// A command name with a space and a parenthesis of its own.
	line := "4242 (post) gres) S 17 4242 4242 0 -1 4194560 100 0 0 0 150 25 7 3 20 0 1 0 99 1000 10"
	got, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if want := (procTimes{parent: 17, own: 175, waited: 10}); got != want {
		t.Fatalf("parseStat = %+v, want %+v", got, want)
	}
	for _, bad := range []string{
		"4242 no name S 17",
		"4242 (short) S 17 1 2",
		"4242 (neg) S 17 4242 4242 0 -1 4194560 100 0 0 0 150 25 -7 3 20 0 1 0 99 1000 10",
	} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) took it; want an error", bad)
		}
	}
}

// A child still running counts too (a backend still connected).
func TestServerCPUCountsARunningChild(t *testing.T) {
	before, err := ServerCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	var used uint64
	for deadline := time.Now().Add(20 * time.Second); used < 10; { // 0.1 s
		if time.Now().After(deadline) {
			t.Fatalf("the child used %d ticks in 20 s", used)
		}
		st, err := readStat(cmd.Process.Pid)
		if err != nil {
			t.Fatal(err)
		}
		used = st.own
		runtime.Gosched()
	}
	after, err := ServerCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if got := after - before; got < float64(used)/clockTicks {
		t.Fatalf("the tree grew by %.3f s, less than the %.2f s its running child had used", got, float64(used)/clockTicks)
	}
}
