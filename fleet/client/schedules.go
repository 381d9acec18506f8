package client

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// CreateSchedule stores a cron schedule of a task spec.
func (c *Client) CreateSchedule(ctx context.Context, req api.ScheduleRequest) (api.ScheduleView, error) {
	var out api.ScheduleView
	return out, c.do(ctx, http.MethodPost, "/v1/schedules", nil, req, &out)
}

// Schedules lists the schedules the caller may see.
func (c *Client) Schedules(ctx context.Context) ([]api.ScheduleView, error) {
	var out api.ScheduleList
	return out.Schedules, c.do(ctx, http.MethodGet, "/v1/schedules", nil, nil, &out)
}

// Schedule reads one schedule.
func (c *Client) Schedule(ctx context.Context, id uuid.UUID) (api.ScheduleView, error) {
	var out api.ScheduleView
	return out, c.do(ctx, http.MethodGet, "/v1/schedules/"+id.String(), nil, nil, &out)
}

// PauseSchedule pauses (or, with paused false, resumes) a schedule.
func (c *Client) PauseSchedule(ctx context.Context, id uuid.UUID, paused bool) (api.ScheduleView, error) {
	op := "/pause"
	if !paused {
		op = "/resume"
	}
	var out api.ScheduleView
	return out, c.do(ctx, http.MethodPost, "/v1/schedules/"+id.String()+op, nil, nil, &out)
}

// DeleteSchedule deletes a schedule; the tasks it submitted stay.
func (c *Client) DeleteSchedule(ctx context.Context, id uuid.UUID) error {
	return c.do(ctx, http.MethodDelete, "/v1/schedules/"+id.String(), nil, nil, nil)
}
