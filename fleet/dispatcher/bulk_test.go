package dispatcher

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// failedTasks submits n tasks labelled run=label and fails them in the
// store, as their workers would have; it returns their ids.
func (b *apiBundle) failedTasks(t *testing.T, n int, label, reason string) map[uuid.UUID]bool {
	t.Helper()
	ctx := context.Background()
	specs := make([]fleet.TaskSpec, n)
	for i := range specs {
		specs[i] = validSpec(fmt.Sprintf("fix flake %d", i))
		specs[i].Labels = map[string]string{"run": label}
	}
	ids := map[uuid.UUID]bool{}
	for start := 0; start < n; start += api.MaxBatch {
		res, err := b.client.SubmitBatch(ctx, specs[start:min(start+api.MaxBatch, n)])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range res.Tasks {
			ids[s.ID] = true
			if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: s.ID, From: store.TaskQueued, To: store.TaskFailed, Error: reason}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return ids
}

func (b *apiBundle) runBulk(t *testing.T, c *client.Client, req api.BulkRequest) api.BulkJob {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	job, err := c.Bulk(ctx, req)
	if err != nil {
		t.Fatalf("bulk %s: %v", req.Action, err)
	}
	if job.State != api.BulkRunning || job.ID == uuid.Nil {
		t.Fatalf("a started job: %+v", job)
	}
	job, err = c.WaitBulk(ctx, job.ID, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatalf("waiting for bulk %s: %v", req.Action, err)
	}
	if job.State != api.BulkDone {
		t.Fatalf("bulk %s ended %s: %+v", req.Action, job.State, job)
	}
	return job
}

// TestBulkRetryTwice: a bulk retry of 1,000 failed tasks makes one new
// attempt of each, linked to its original by its key, and a second run
// makes none.
func TestBulkRetryTwice(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		const n = 1000
		b := setupAPI(t, mk)
		ctx := context.Background()
		originals := b.failedTasks(t, n, "nightly", "dead_letter: provider outage")
		other := b.failedTasks(t, 3, "other", "dead_letter")
		filter := api.BulkFilter{Labels: map[string]string{"run": "nightly"}, States: []store.TaskState{store.TaskFailed}, Error: "outage"}

		prev, err := b.client.BulkPreview(ctx, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
		if err != nil {
			t.Fatal(err)
		}
		if prev.Matched != n || len(prev.Sample) != bulkSample || !originals[prev.Sample[0].ID] {
			t.Fatalf("dry run: matched %d with %d samples, want %d and %d of the originals", prev.Matched, len(prev.Sample), n, bulkSample)
		}
		if got := b.storedTasks(t); got != n+3 {
			t.Fatalf("a dry run stored tasks: %d, want %d", got, n+3)
		}

		first := b.runBulk(t, b.client, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
		second := b.runBulk(t, b.client, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
		for i, j := range []api.BulkJob{first, second} {
			t.Logf("run %d: matched %d, created %d, existing %d, failed %d in %s", i+1, j.Matched, j.Created, j.Existing, j.Failed, j.EndedAt.Sub(j.StartedAt).Round(time.Millisecond))
		}
		if first.Matched != n || first.Created != n || first.Existing != 0 || first.Failed != 0 {
			t.Fatalf("first run: matched %d created %d existing %d failed %d (%v), want %d new", first.Matched, first.Created, first.Existing, first.Failed, first.Errors, n)
		}
		if second.Matched != n || second.Created != 0 || second.Existing != n {
			t.Fatalf("second run: matched %d created %d existing %d, want %d existing and none new", second.Matched, second.Created, second.Existing, n)
		}

		// In the store: each original has exactly one attempt, queued,
		// with the original's spec and tenant.
		seen := map[uuid.UUID]int{}
		p := store.ListTasksParams{Labels: map[string]string{"run": "nightly"}, States: []store.TaskState{store.TaskQueued}, Limit: 1000}
		for {
			page, err := b.st.ListTasks(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			for _, task := range page.Tasks {
				orig, attempt, ok := ParseRetryKey(task.IdempotencyKey)
				if !ok || attempt != 1 || !originals[orig] {
					t.Fatalf("retry %s has key %q, want retry:<an original>:1", task.ID, task.IdempotencyKey)
				}
				seen[orig]++
			}
			if page.NextCursor == "" {
				break
			}
			p.Cursor = page.NextCursor
		}
		if len(seen) != n {
			t.Fatalf("%d originals have a retry, want %d", len(seen), n)
		}
		for orig, c := range seen {
			if c != 1 {
				t.Fatalf("original %s has %d retries, want 1", orig, c)
			}
		}
		if got := b.storedTasks(t); got != 2*n+3 {
			t.Fatalf("stored tasks: %d, want %d (no duplicate)", got, 2*n+3)
		}
		if got := b.tasksInStream(t); got != 2*n+3 {
			t.Fatalf("start messages: %d, want %d", got, 2*n+3)
		}
		for id := range other {
			if task, _ := b.st.GetTask(ctx, store.GetTaskParams{ID: id}); task.State != store.TaskFailed {
				t.Fatalf("a task outside the filter is %s", task.State)
			}
		}
	})
}

// TestBulkRetryAttempts: retrying a failed retry makes the next attempt
// of the same original; a child is not retried on its own.
func TestBulkRetryAttempts(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	var orig uuid.UUID
	for id := range b.failedTasks(t, 1, "chain", "boom") {
		orig = id
	}
	filter := api.BulkFilter{Labels: map[string]string{"run": "chain"}, States: []store.TaskState{store.TaskFailed}}
	b.runBulk(t, b.client, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
	retry, err := b.st.GetTask(ctx, store.GetTaskParams{ID: b.byKey(t, "retry:"+orig.String()+":1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: retry.ID, From: store.TaskQueued, To: store.TaskFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	child, err := b.st.CreateTask(ctx, store.CreateTaskParams{ParentID: orig, Spec: retry.Spec, Labels: map[string]string{"run": "chain"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: child.Task.ID, From: store.TaskQueued, To: store.TaskFailed}); err != nil {
		t.Fatal(err)
	}
	job := b.runBulk(t, b.client, api.BulkRequest{Action: api.BulkRetry, Filter: filter})
	if job.Matched != 2 || job.Created != 1 || job.Existing != 1 {
		t.Fatalf("second retry: %+v, want the original's attempt 1 existing and the retry's attempt 2 new (the child skipped)", job)
	}
	b.byKey(t, "retry:"+orig.String()+":2")
}

// byKey returns the id of the task with an idempotency key.
func (b *apiBundle) byKey(t *testing.T, key string) uuid.UUID {
	t.Helper()
	page, err := b.st.ListTasks(context.Background(), store.ListTasksParams{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range page.Tasks {
		if task.IdempotencyKey == key {
			return task.ID
		}
	}
	t.Fatalf("no task with key %q", key)
	return uuid.Nil
}

// TestBulkCancelByLabel: a cancel by label keeps to the caller's tenants
// and, for a submitter, to its own tasks; a tenant's submitter cannot
// act on another tenant or see its jobs; each call is in the audit log.
func TestBulkCancelByLabel(t *testing.T) {
	f := setupTenants(t, sqliteStore)
	ctx := context.Background()
	labelled := func(tenant string) fleet.TaskSpec {
		s := validSpec("lint")
		s.Tenant, s.Labels = tenant, map[string]string{"batch": "x"}
		return s
	}
	var mine, theirs, teamB []uuid.UUID
	for range 3 {
		mine = append(mine, f.submitAs(t, "submitter", labelled("team-a")).ID)
	}
	for range 2 {
		theirs = append(theirs, f.submitAs(t, "submitter2", labelled("team-a")).ID)
		teamB = append(teamB, f.submitAs(t, "b-submitter", labelled("team-b")).ID)
	}
	filter := api.BulkFilter{Labels: map[string]string{"batch": "x"}}

	_, err := f.clients["b-submitter"].BulkPreview(ctx, api.BulkRequest{Action: api.BulkCancel, Filter: api.BulkFilter{Tenant: "team-a", Labels: filter.Labels}})
	wantStatus(t, "team-b's submitter naming team-a", err, http.StatusForbidden)
	_, err = f.clients["viewer"].BulkPreview(ctx, api.BulkRequest{Action: api.BulkCancel, Filter: filter})
	wantStatus(t, "a viewer", err, http.StatusForbidden)
	_, err = f.clients["submitter"].BulkPreview(ctx, api.BulkRequest{Action: "archive", Filter: filter})
	wantStatus(t, "an unknown action", err, http.StatusBadRequest)
	_, err = f.clients["submitter"].BulkPreview(ctx, api.BulkRequest{Action: api.BulkCancel})
	wantStatus(t, "an empty filter", err, http.StatusBadRequest)

	prev, err := f.clients["submitter"].BulkPreview(ctx, api.BulkRequest{Action: api.BulkCancel, Filter: filter})
	if err != nil || prev.Matched != len(mine) {
		t.Fatalf("the submitter's dry run: %+v, %v; want its %d tasks", prev, err, len(mine))
	}
	job := f.runBulk(t, f.clients["submitter"], api.BulkRequest{Action: api.BulkCancel, Filter: filter, Reason: "bad prompt"})
	if job.Matched != 3 || job.Cancelled != 3 || job.Failed != 0 {
		t.Fatalf("the submitter's cancel: %+v, want its 3 tasks", job)
	}
	_, err = f.clients["b-submitter"].BulkJob(ctx, job.ID)
	wantStatus(t, "another tenant's job", err, http.StatusNotFound)
	if _, err := f.clients["admin"].BulkJob(ctx, job.ID); err != nil {
		t.Fatalf("team-a's admin reads team-a's job: %v", err)
	}
	wantStates := func(what string, ids []uuid.UUID, want store.TaskState) {
		t.Helper()
		for _, id := range ids {
			task, err := f.st.GetTask(ctx, store.GetTaskParams{ID: id})
			if err != nil || task.State != want {
				t.Fatalf("%s: task %s is %s (%v), want %s", what, id, task.State, err, want)
			}
			if want == store.TaskCancelled && task.Error != "bad prompt" && task.Error != "admin cleanup" && task.Error != "cancelled" {
				t.Fatalf("%s: reason %q", what, task.Error)
			}
		}
	}
	wantStates("the submitter's", mine, store.TaskCancelled)
	wantStates("another submitter's", theirs, store.TaskQueued)
	wantStates("team-b's", teamB, store.TaskQueued)

	job = f.runBulk(t, f.clients["b-submitter"], api.BulkRequest{Action: api.BulkCancel, Filter: filter})
	if job.Cancelled != 2 {
		t.Fatalf("team-b's cancel: %+v, want its 2", job)
	}
	wantStates("team-b's after its cancel", teamB, store.TaskCancelled)
	wantStates("team-a's after team-b's cancel", theirs, store.TaskQueued)
	job = f.runBulk(t, f.clients["admin"], api.BulkRequest{Action: api.BulkCancel, Filter: filter, Reason: "admin cleanup"})
	if job.Cancelled != 2 {
		t.Fatalf("the admin's cancel: %+v, want the 2 left", job)
	}
	wantStates("after the admin's cancel", theirs, store.TaskCancelled)

	audit, err := f.clients["admin"].Audit(ctx, client.AuditFilter{Action: "task.bulk_cancel"})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit.Entries) != 2 { // the submitter's and the admin's in team-a
		t.Fatalf("team-a's audit log has %d bulk cancels, want 2: %+v", len(audit.Entries), audit.Entries)
	}
}

// TestBulkProgressStream: the progress of a job streams until it ends.
func TestBulkProgressStream(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	b.failedTasks(t, 5, "s", "x")
	job, err := b.client.Bulk(context.Background(), api.BulkRequest{Action: api.BulkRetry, Filter: api.BulkFilter{Labels: map[string]string{"run": "s"}}})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/v1/bulk/"+job.ID.String(), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	req.Header.Set("Accept", "text/event-stream")
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body) // the stream ends with the job
	raw := string(body)
	if err != nil || !strings.Contains(raw, `"state":"done"`) || !strings.Contains(raw, `"created":5`) {
		t.Fatalf("the stream did not end with the done job: %s", raw)
	}
}

// TestBulkRetryRefusedSpec: a spec the dispatcher now refuses fails
// alone; the others of its batch are retried.
func TestBulkRetryRefusedSpec(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	b.failedTasks(t, 2, "mixed", "boom")
	bad, err := b.st.CreateTask(ctx, store.CreateTaskParams{Spec: []byte(`{"prompt":"x","profile":"retired-profile"}`), Labels: map[string]string{"run": "mixed"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.st.TransitionTask(ctx, store.TransitionTaskParams{ID: bad.Task.ID, From: store.TaskQueued, To: store.TaskFailed}); err != nil {
		t.Fatal(err)
	}
	job := b.runBulk(t, b.client, api.BulkRequest{Action: api.BulkRetry, Filter: api.BulkFilter{Labels: map[string]string{"run": "mixed"}}})
	if job.Matched != 3 || job.Created != 2 || job.Failed != 1 || len(job.Errors) != 1 || !strings.Contains(job.Errors[0], "profile") {
		t.Fatalf("job %+v, want 2 retried and the refused spec failed naming its field", job)
	}
}
