package fleet

import (
	"reflect"
	"testing"
)

func TestDefaultsApply(t *testing.T) {
	t.Parallel()
	d := Defaults{Profile: "openai", Limits: Limits{MaxTurns: 50, MaxTokens: 1000}, Policy: Policy{MaxTurns: 20}}
	s := d.Apply(TaskSpec{Prompt: "p"})
	if s.Profile != "openai" || s.Limits != (Limits{MaxTurns: 20, MaxTokens: 1000}) || s.Queue != DefaultQueue ||
		s.ChildPolicy != ChildCancel || s.MaxSubagentDepth == nil || *s.MaxSubagentDepth != DefaultSubagentDepth ||
		s.Environment.Kind != EnvLocal || s.MaxLiveChildren != 0 {
		t.Fatalf("Apply filled %+v", s)
	}
	zero := 0
	given := TaskSpec{Prompt: "p", Profile: "gemini", Limits: Limits{MaxTurns: 3}, Queue: "q", ChildPolicy: ChildLetRun,
		MaxSubagentDepth: &zero, Environment: Environment{Kind: EnvSSH}}
	if got := d.Apply(given); got.Profile != "gemini" || got.Limits.MaxTurns != 3 || got.Queue != "q" ||
		got.ChildPolicy != ChildLetRun || *got.MaxSubagentDepth != 0 || got.Environment.Kind != EnvSSH {
		t.Fatalf("Apply changed what the spec gave: %+v", got)
	}
	if again := d.Apply(s); !reflect.DeepEqual(again, s) {
		t.Fatalf("Apply is not idempotent:\n%+v\n%+v", again, s)
	}
	if w := (TaskSpec{Prompt: "p"}).WithDefaults(); w.Profile != "" || w.Limits != (Limits{}) || w.Queue != DefaultQueue {
		t.Fatalf("WithDefaults filled %+v; want the spec's own defaults only", w)
	}
}

func TestLiveChildrenLimit(t *testing.T) {
	t.Parallel()
	if n := (TaskSpec{}).LiveChildrenLimit(32); n != 32 {
		t.Errorf("unset: %d, want the worker's 32", n)
	}
	if n := (TaskSpec{MaxLiveChildren: 3}).LiveChildrenLimit(32); n != 3 {
		t.Errorf("set: %d, want the spec's 3", n)
	}
}
