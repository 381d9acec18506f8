package dispatcher

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// TestPrepareAppliesTheDefaultsOnce: a submitted spec leaves prepare with
// the operator's profile and limits (lowered to the policy's maxima) and
// the spec's own defaults, and nothing a worker falls back to.
func TestPrepareAppliesTheDefaultsOnce(t *testing.T) {
	d := &Dispatcher{cfg: Config{Profiles: []string{"openai", "anthropic"},
		DefaultLimits: fleet.Limits{MaxTurns: 50, MaxTokens: 1000},
		Policy:        fleet.Policy{MaxTurns: 20}}.WithDefaults()}
	p, err := d.prepare(fleet.TaskSpec{Prompt: "fix the test"})
	if err != nil {
		t.Fatal(err)
	}
	s, err := fleet.DecodeSpec(p.Spec)
	if err != nil {
		t.Fatal(err)
	}
	if s.Profile != "openai" || s.Limits.MaxTurns != 20 || s.Limits.MaxTokens != 1000 || s.Queue != fleet.DefaultQueue ||
		p.Queue != fleet.DefaultQueue || s.ChildPolicy != fleet.ChildCancel || s.SubagentDepthLimit() != fleet.DefaultSubagentDepth ||
		s.Environment.Kind != fleet.EnvLocal || s.MaxLiveChildren != 0 {
		t.Fatalf("stored spec %+v", s)
	}
	if _, err := d.prepare(fleet.TaskSpec{Prompt: "x", Profile: "gemini"}); err == nil {
		t.Fatal("a profile the dispatcher does not serve was accepted")
	} else if fe := (*fleet.FieldError)(nil); !errors.As(err, &fe) || fe.Field != "spec.profile" {
		t.Fatalf("error %v, want a field error naming spec.profile", err)
	}
}

// TestBatchErrorKeepsEveryError: a field error becomes a *BatchError
// naming the spec; any other error is returned too (it used to become
// nil, which accepted the spec).
func TestBatchErrorKeepsEveryError(t *testing.T) {
	cause := errors.New("the repository rules could not be read")
	err := batchError(1, 3, cause)
	var be *BatchError
	if err == nil || !errors.Is(err, cause) || errors.As(err, &be) || !strings.Contains(err.Error(), "tasks[1]") {
		t.Fatalf("batchError of a plain error = %v", err)
	}
	fe := &fleet.FieldError{Field: "spec.prompt", Reason: "is required"}
	if err := batchError(1, 3, fe); !errors.As(err, &be) || be.Index != 1 || be.Err.Field != "tasks[1].prompt" {
		t.Fatalf("batchError of a field error in a batch = %v", err)
	}
	if err := batchError(0, 1, fe); !errors.As(err, &be) || be.Err.Field != "spec.prompt" {
		t.Fatalf("batchError of a field error alone = %v", err)
	}
}
