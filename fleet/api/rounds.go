package api

import "time"

// Round triggers (Round.Trigger).
const (
	TriggerAPI      = "api"      // submitted, or followed up, through the API, the CLI or the dashboard
	TriggerSchedule = "schedule" // submitted by a cron schedule (Detail: its id)
	TriggerForge    = "forge"    // a forge event (Cause: label, comment, review, ci, conflict)
)

// CauseCI is the forge cause of a CI repair round: a failing status,
// check run or pipeline on the task's pull request.
const CauseCI = "ci"

// Round is one run of a task: round 1 is its first run, each later one a
// follow-up that reopened it, with what triggered it.
type Round struct {
	Round   int       `json:"round"`
	Trigger string    `json:"trigger"`          // TriggerAPI, TriggerSchedule or TriggerForge
	Cause   string    `json:"cause,omitempty"`  // a forge round's cause (CauseCI is a CI repair)
	Detail  string    `json:"detail,omitempty"` // the schedule id, the forge and its issue...
	By      string    `json:"by,omitempty"`     // the principal that submitted or followed up
	At      time.Time `json:"at"`
	// Input names the stored input the round answered (an artifact of
	// kind "input"); empty for round 1.
	Input string `json:"input,omitempty"`
}

// PullRequestState is the state of the pull request a task delivered.
type PullRequestState struct {
	URL    string `json:"url"`
	Number int    `json:"number"`
	// State is "open", or "merged" or "closed" once its forge said so.
	State string `json:"state"`
}

// RoundList answers GET /v1/tasks/{id}/rounds: the task's rounds, oldest
// first, and its pull request when it delivered one.
type RoundList struct {
	Rounds      []Round           `json:"rounds"`
	PullRequest *PullRequestState `json:"pull_request,omitempty"`
}
