package spawn

import (
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// A local child runs in its parent's environment image, with the same
// credentials reference: it works on the parent's files with the same
// toolchain.
func TestChildInheritsTheParentsImage(t *testing.T) {
	dir := t.TempDir()
	s := New(Fleet{}, Parent{Task: store.Task{ID: uuid.New()}, WorkingDir: dir, Log: slog.Default(),
		Spec: fleet.TaskSpec{Environment: fleet.Environment{Kind: fleet.EnvLocal, Image: "golang:1.22", ImageCredentials: "hub"}}})
	spec, err := s.childSpec(agent.SpawnRequest{Task: "t"}, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if e := spec.Environment; e.Image != "golang:1.22" || e.ImageCredentials != "hub" || e.WorkingDir != dir {
		t.Errorf("the child's environment %+v, want the parent's image in %s", e, dir)
	}
}
