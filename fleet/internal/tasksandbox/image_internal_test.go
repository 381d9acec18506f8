package tasksandbox

import (
	"slices"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
)

// An image's environment comes before the operator's sandbox_env, a
// default PATH before both, and the image's HOME and TMPDIR are dropped:
// the sandbox's private ones stay.
func TestApplyImageKeepsThePrivateHome(t *testing.T) {
	s := State{}.WithImage(&Image{Root: "/cache/rootfs", Env: []string{"PATH=/opt/go/bin:/bin", "HOME=/root", "TMPDIR=/var/tmp", "LANG=C.UTF-8"}})
	set := sandbox.Settings{Env: []string{"GOCACHE=/cache/go"}}
	s.applyImage(&set)
	want := []string{DefaultImagePath, "PATH=/opt/go/bin:/bin", "LANG=C.UTF-8", "GOCACHE=/cache/go"}
	if set.Image != "/cache/rootfs" || !slices.Equal(set.Env, want) {
		t.Errorf("settings %q, %q; want /cache/rootfs, %q", set.Image, set.Env, want)
	}
	if err := s.imageRefusal(); err == nil {
		t.Error("an image on a worker without the sandbox was not refused")
	}
}
