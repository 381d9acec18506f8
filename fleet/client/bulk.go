package client

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// BulkPreview answers what req.Action would act on (a dry run: nothing
// is done), whatever req.DryRun says.
func (c *Client) BulkPreview(ctx context.Context, req api.BulkRequest) (api.BulkPreview, error) {
	req.DryRun = true
	var out api.BulkPreview
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/bulk", nil, req, &out)
}

// Bulk starts req.Action on the tasks req.Filter selects and returns its
// job at once; BulkJob or WaitBulk follow its progress.
func (c *Client) Bulk(ctx context.Context, req api.BulkRequest) (api.BulkJob, error) {
	req.DryRun = false
	var out api.BulkJob
	return out, c.do(ctx, http.MethodPost, "/v1/tasks/bulk", nil, req, &out)
}

// BulkJob returns the progress of a bulk job.
func (c *Client) BulkJob(ctx context.Context, id uuid.UUID) (api.BulkJob, error) {
	var out api.BulkJob
	return out, c.do(ctx, http.MethodGet, "/v1/bulk/"+id.String(), nil, nil, &out)
}

// WaitBulk polls a bulk job every interval (default 200 ms), calling
// progress (when not nil) with each answer, until it has ended or ctx
// ends.
func (c *Client) WaitBulk(ctx context.Context, id uuid.UUID, interval time.Duration, progress func(api.BulkJob)) (api.BulkJob, error) {
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		job, err := c.BulkJob(ctx, id)
		if err != nil {
			return job, err
		}
		if progress != nil {
			progress(job)
		}
		if job.State != api.BulkRunning {
			return job, nil
		}
		select {
		case <-ctx.Done():
			return job, ctx.Err()
		case <-t.C:
		}
	}
}

// Retention returns the retention policies and the rows deleted.
func (c *Client) Retention(ctx context.Context) (api.RetentionView, error) {
	var out api.RetentionView
	return out, c.do(ctx, http.MethodGet, "/v1/retention", nil, nil, &out)
}
