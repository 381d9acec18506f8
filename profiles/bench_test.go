package profiles_test

import (
	"context"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/profiles"
)

// BenchmarkBuildSystemPrompt renders the anthropic prompt for a fresh empty
// workspace (no git, no instruction files), as every task of the fleet
// benchmark does once.
func BenchmarkBuildSystemPrompt(b *testing.B) {
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	p := profiles.Anthropic("", profiles.WithClock(fixedNow))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.BuildSystemPrompt(ctx, env, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSessionPrompt is what the fleet does per task: make the
// anthropic profile, then render its prompt for a fresh empty workspace.
func BenchmarkSessionPrompt(b *testing.B) {
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		p := profiles.Anthropic("", profiles.WithClock(fixedNow))
		if _, err := p.BuildSystemPrompt(ctx, env, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}
