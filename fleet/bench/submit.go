package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

// runSubmitOnly measures submission alone (Config.SubmitOnly): the fleet
// has no workers, so every task stays queued, and the figure is tasks
// stored and enqueued per second through the HTTP API.
func (b *benchRun) runSubmitOnly(ctx context.Context, rep Report) (Report, error) {
	start := time.Now()
	if err := b.submit(ctx); err != nil {
		return rep, err
	}
	rep.SubmitSeconds = time.Since(start).Seconds()
	rep.SubmitTasksPerS = float64(b.cfg.Tasks) / rep.SubmitSeconds
	fmt.Fprintf(b.cfg.Progress, "submitted %d tasks in %.2fs\n", b.cfg.Tasks, rep.SubmitSeconds)
	return rep, nil
}

// submit sends the bench's tasks in batches of Config.Batch, up to
// Config.SubmitConcurrency requests at a time; in a two-class run, the
// second class's LateTasks after all of the first class's are stored.
func (b *benchRun) submit(ctx context.Context) error {
	if err := b.submitRange(ctx, 0, b.cfg.Tasks, false); err != nil {
		return err
	}
	if b.cfg.twoClass() {
		return b.submitRange(ctx, b.cfg.Tasks, b.cfg.total(), true)
	}
	return nil
}

// submitRange submits the tasks numbered from to end (excluded), of the
// second class when late.
func (b *benchRun) submitRange(ctx context.Context, from, end int, late bool) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(b.cfg.SubmitConcurrency)
	for done := from; done < end; done += b.cfg.Batch {
		n := min(b.cfg.Batch, end-done)
		specs := make([]fleet.TaskSpec, n)
		for i := range specs {
			specs[i] = fleet.TaskSpec{Prompt: benchPrompt(done+i, b.cfg.PromptBytes), Profile: b.profile, Labels: map[string]string{"bench": b.label},
				Context: fleet.ContextSpec{Window: b.cfg.ContextWindow}}
			if stalls(done+i, b.cfg.StallRate) {
				markStalled(&specs[i])
			}
			b.cfg.classOf(&specs[i], late)
		}
		g.Go(func() error {
			resp, err := b.cl.SubmitBatch(gctx, specs)
			if err != nil {
				return fmt.Errorf("bench: submit: %w", err)
			}
			if late {
				b.noteQueued(resp.Tasks, time.Now())
			}
			return nil
		})
	}
	return g.Wait()
}

// noteQueued records when the submission of late tasks returned: they were
// queued by then (the dispatcher publishes before it answers).
func (b *benchRun) noteQueued(tasks []api.SubmittedTask, at time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.queued == nil {
		b.queued = map[uuid.UUID]time.Time{}
	}
	for _, t := range tasks {
		b.queued[t.ID] = at
	}
}

// promptFiller pads a bench prompt: a task as a team would write it, with
// the varied vocabulary of one (about a hundred distinct words), so that
// the store's text search indexes what it would in use.
const promptFiller = " Refactor the payment router so that failed charges are retried with" +
	" exponential backoff and jitter, capped at five attempts. Keep the public API of" +
	" package router unchanged; callers in billing, invoices and the webhook handler" +
	" must compile without edits. Update the table-driven tests under pkg/router to cover" +
	" timeouts, duplicate idempotency keys and a provider that answers 429 with a" +
	" Retry-After header. Measure the p99 latency before and after with the existing" +
	" benchmark, and write the figures in the pull request description. Do not touch the" +
	" database migrations or the generated protobuf code. If a flaky test blocks you," +
	" quarantine it with a comment naming the issue instead of deleting it. Finally," +
	" update docs/operations.md where it describes retries, and run the linter."

// benchPrompt is the prompt of task i, padded to size bytes when size is
// larger than its few words.
func benchPrompt(i, size int) string {
	p := fmt.Sprintf("bench task %d", i)
	if size <= len(p) {
		return p
	}
	var b strings.Builder
	b.WriteString(p)
	for b.Len() < size {
		b.WriteString(promptFiller)
	}
	return b.String()[:size]
}
