package client

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// ReportQuery selects the tasks of GET /v1/reports and its export.
type ReportQuery struct {
	Labels  map[string]string // tasks carrying every one
	Compare map[string]string // the second filter: these labels over Labels
	Tenant  string
	Since   time.Time
	Until   time.Time
	Limit   int // tasks read per filter; 0 for the server's default
}

func (q ReportQuery) values() url.Values {
	v := url.Values{}
	for k, val := range q.Labels {
		v.Add("label", k+"="+val)
	}
	for k, val := range q.Compare {
		v.Add("compare", k+"="+val)
	}
	if q.Tenant != "" {
		v.Set("tenant", q.Tenant)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.Format(time.RFC3339Nano))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// Reports returns the backlog report of q (and of its comparison).
func (c *Client) Reports(ctx context.Context, q ReportQuery) (api.Reports, error) {
	var out api.Reports
	return out, c.do(ctx, http.MethodGet, "/v1/reports", q.values(), nil, &out)
}

// ReportExport opens the JSON lines of q's finished tasks (one
// api.ExportRecord a line); the caller closes it. q.Compare is ignored.
func (c *Client) ReportExport(ctx context.Context, q ReportQuery) (io.ReadCloser, error) {
	q.Compare = nil
	resp, err := c.send(ctx, http.MethodGet, "/v1/reports/export", q.values(), nil, nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
