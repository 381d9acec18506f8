package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentfleet/agentfleet/internal/tracing"
)

// TracingConfig is the `tracing` section of the dispatcher's and the
// worker's configuration (docs/operations.md "Tracing"). Where traces go
// is the standard OTEL_EXPORTER_OTLP_* environment; without an endpoint
// tracing is off and costs nothing.
type TracingConfig struct {
	// SampleRatio is the fraction of new traces kept, 0 to 1 (default 1);
	// the traces of failed tasks are kept whatever it is.
	SampleRatio *float64 `mapstructure:"sample_ratio"`
	// RecordToolIO lets tool spans carry their arguments and output,
	// redacted of the session's secrets (default off).
	RecordToolIO bool `mapstructure:"record_tool_io"`
	// UIURL is the link to one trace in the operator's tracing UI, with
	// {trace_id} where its id goes (dispatcher only; e.g.
	// "https://jaeger.example.com/trace/{trace_id}"): the dashboard's
	// timeline links each task's trace there. "" for no link.
	UIURL string `mapstructure:"ui_url"`
}

// Validate reports a sample ratio out of range or a UI URL that is not
// an http(s) URL with {trace_id}.
func (c TracingConfig) Validate() error {
	if r := c.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		return fmt.Errorf("tracing.sample_ratio is %v; give the fraction of traces to keep, from 0 to 1", *r)
	}
	return tracing.CheckUIURL(c.UIURL)
}

// SetupTracing starts tracing for the process service (instance: a
// worker's id, or "") as c and the environment say, and returns the function that flushes it at exit.
func SetupTracing(ctx context.Context, service, instance string, c TracingConfig, log *slog.Logger) (func(), error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ratio := 1.0
	if c.SampleRatio != nil {
		ratio = *c.SampleRatio
	}
	shutdown, err := tracing.Setup(ctx, tracing.Options{Service: service, Instance: instance, SampleRatio: ratio, RecordToolIO: c.RecordToolIO})
	if err != nil {
		return nil, err
	}
	if tracing.Enabled() {
		log.Info("tracing", "sample_ratio", ratio, "record_tool_io", c.RecordToolIO)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Warn("flushing the last spans", "err", err)
		}
	}, nil
}
