package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/report"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// reporter is what the backlog reports read of the store.
type reporter interface {
	ReportTasks(ctx context.Context, p store.ReportTasksParams) (store.ReportTasksResult, error)
	GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error)
}

// reportQuery reads the filter of GET /v1/reports and its export:
// label=k=v (repeated), compare=k=v (repeated), since, until, limit and
// tenant. It writes the 400 itself when ok is false.
func reportQuery(w http.ResponseWriter, r *http.Request) (p store.ReportTasksParams, compare map[string]string, ok bool) {
	q := r.URL.Query()
	labels, field, reason := parseLabels(q["label"])
	if field == "" {
		compare, field, reason = parseLabels(q["compare"])
		if field != "" {
			field = "compare"
		}
	}
	if field != "" {
		badRequestf(w, field, "%s", reason)
		return p, nil, false
	}
	p.Labels = labels
	for name, dst := range map[string]*time.Time{"since": &p.CreatedAfter, "until": &p.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := parseDayOrTime(v)
			if err != nil {
				badRequestf(w, name, "%q is not a date (2025-01-02) or an RFC 3339 time (2025-01-02T15:04:05Z)", v)
				return p, nil, false
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxReportTasks {
			badRequestf(w, "limit", "%q must be a number of tasks from 1 to %d", v, store.MaxReportTasks)
			return p, nil, false
		}
		p.Limit = n
	}
	p.Tenants = tenantFilter(principal(r), identity.Viewer, q.Get("tenant"))
	return p, compare, true
}

// reportsHandler serves GET /v1/reports: the report of the label filter
// and, with compare, of the filter with the compare labels put over it
// (fleet/report).
func (a *handlers) reportsHandler(w http.ResponseWriter, r *http.Request) {
	p, compare, ok := reportQuery(w, r)
	if !ok {
		return
	}
	now := time.Now()
	build := func(p store.ReportTasksParams) (api.Report, error) {
		res, err := a.reports.ReportTasks(r.Context(), p)
		return report.Build(p.Labels, res, now), err
	}
	var out api.Reports
	var err error
	if out.Report, err = build(p); err != nil {
		a.fail(w, r, err)
		return
	}
	if len(compare) > 0 {
		p.Labels = report.CompareFilter(p.Labels, compare)
		other, err := build(p)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		out.Compare = &other
	}
	writeJSON(w, http.StatusOK, out)
}

// reportExport serves GET /v1/reports/export: one JSON line
// (api.ExportRecord) per finished root task of the filter, oldest first.
// compare is ignored.
func (a *handlers) reportExport(w http.ResponseWriter, r *http.Request) {
	p, _, ok := reportQuery(w, r)
	if !ok {
		return
	}
	res, err := a.reports.ReportTasks(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	if res.Truncated {
		w.Header().Set("X-Truncated", "true")
	}
	enc := json.NewEncoder(w)
	for _, rt := range res.Tasks {
		if !rt.Task.State.Terminal() {
			continue
		}
		rec, err := a.exportRecord(r.Context(), rt)
		if err != nil {
			a.log.Warn("report export stopped", "task", rt.Task.ID, "err", err)
			return // the status is sent: the short body is the signal
		}
		if err := enc.Encode(rec); err != nil {
			return
		}
	}
}

func (a *handlers) exportRecord(ctx context.Context, rt store.ReportTask) (api.ExportRecord, error) {
	t := rt.Task
	rec := api.ExportRecord{TaskID: t.ID.String(), State: string(t.State), Labels: t.Labels,
		CreatedAt: t.CreatedAt, FinishedAt: t.FinishedAt, CostUSD: rt.CostUSD}
	if t.State != store.TaskSucceeded {
		rec.Reason = t.Error
	}
	if spec, err := fleet.DecodeSpec(t.Spec); err == nil {
		rec.Prompt = spec.Prompt
	}
	if res, ok := fleet.DecodeResult(t.Result); ok {
		rec.FinalAnswer, rec.Structured, rec.Turns = res.FinalText, res.Structured, res.TurnsUsed
		if res.Checks != nil {
			rec.Checks, _ = json.Marshal(res.Checks) // a decoded struct always marshals
		}
		if res.Delivery != nil {
			rec.PullRequest = res.Delivery.RequestURL
		}
	}
	diff, err := a.reports.GetArtifact(ctx, store.GetArtifactParams{TaskID: t.ID, Kind: "diff"})
	switch {
	case err == nil:
		rec.Diff = string(diff.Content)
	case !errors.Is(err, store.ErrNotFound):
		return rec, err
	}
	return rec, nil
}
