package agent_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// A file a command changed after the model read it is not edited from the
// stale view: the edit is refused with the reason, the file keeps the
// command's change, and after a new read the same edit goes through.
func TestStaleEditRefusedEveryProvider(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		w := newWorld(t, p, agent.Config{})
		w.writeFile("notes.txt", "alpha\nbeta\n")
		read, change := w.read("notes.txt"), w.shell("printf 'alpha\\nBETA\\n' > notes.txt")
		stale := w.edit("notes.txt", "alpha", "ALPHA")
		reread, fresh := w.read("notes.txt"), w.edit("notes.txt", "alpha", "ALPHA")
		w.script(calls(read), calls(change), calls(stale), calls(reread), calls(fresh), sim.Text("done"))
		w.submit("edit notes")
		r := w.result(stale.ID)
		if !r.IsError {
			t.Fatalf("stale edit succeeded: %s", r.Content)
		}
		contains(t, "stale edit result", r.Content, "changed since you last read it")
		contains(t, "stale edit result", r.Content, "read the file again")
		if r := w.result(fresh.ID); r.IsError {
			t.Fatalf("edit after a new read: %s", r.Content)
		}
		if got := w.file("notes.txt"); got != "ALPHA\nBETA\n" {
			t.Fatalf("notes.txt = %q, want the command's change and the edit", got)
		}
	})
}
