package dispatcher

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// BenchmarkAPISubmitBatch measures POST /v1/tasks/batch of 1000 tasks
// (validate, one store transaction, 1000 JetStream publishes) on SQLite and
// Postgres.
func BenchmarkAPISubmitBatch(b *testing.B) {
	for _, s := range []struct {
		name string
		mk   storeMaker
	}{{"sqlite", sqliteStore}, {"postgres", postgresStore}} {
		b.Run(s.name, func(b *testing.B) {
			bu := setupAPI(b, s.mk)
			specs := make([]fleet.TaskSpec, 1000)
			for i := range specs {
				specs[i] = validSpec(fmt.Sprintf("task %d", i))
			}
			for b.Loop() {
				if _, err := bu.client.SubmitBatch(context.Background(), specs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(specs))/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkValidate measures the validation of one spec.
func BenchmarkValidate(b *testing.B) {
	s := fleet.TaskSpec{Prompt: "fix the flaky test", Profile: "openai", Labels: map[string]string{"team": "payments"},
		Environment: fleet.Environment{Kind: fleet.EnvSSH, Host: "build1", User: "ci", KeyRef: "ci", WorkingDir: "/srv"}}
	for b.Loop() {
		if err := s.ValidateSubmission(); err != nil {
			b.Fatal(err)
		}
	}
}
