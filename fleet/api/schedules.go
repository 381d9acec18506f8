package api

import (
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
)

// ScheduleRequest is the body of POST /v1/schedules: a task spec the
// dispatcher submits at every tick of Cron, a standard 5-field cron
// expression ("0 3 * * *", in UTC) or a descriptor ("@daily", "@every
// 1h"). The spec's tenant (default: the creator's default tenant) owns
// the schedule; its idempotency_key must be empty (each tick has its own).
type ScheduleRequest struct {
	Name   string         `json:"name,omitempty"`
	Cron   string         `json:"cron"`
	Spec   fleet.TaskSpec `json:"spec"`
	Paused bool           `json:"paused,omitempty"`
}

// ScheduleView is a schedule as the API shows it.
type ScheduleView struct {
	ID         uuid.UUID      `json:"id"`
	Name       string         `json:"name,omitempty"`
	Cron       string         `json:"cron"`
	Spec       fleet.TaskSpec `json:"spec"`
	Tenant     string         `json:"tenant"`
	CreatedBy  string         `json:"created_by"`
	Paused     bool           `json:"paused"`
	NextFireAt time.Time      `json:"next_fire_at"`
	LastFireAt *time.Time     `json:"last_fire_at,omitempty"`
	CreatedAt  time.Time      `json:"created_at"`
}

// ScheduleList is the body of GET /v1/schedules.
type ScheduleList struct {
	Schedules []ScheduleView `json:"schedules"`
}
