package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agentfleet/agentfleet/internal/tracing"
)

// CheckLogging names what is wrong with the log_format and log_level keys.
func CheckLogging(format, level string) error {
	var errs []error
	if format != "json" && format != "text" {
		errs = append(errs, fmt.Errorf("log_format must be json or text, got %q", format))
	}
	var lvl slog.Level
	if lvl.UnmarshalText([]byte(level)) != nil {
		errs = append(errs, fmt.Errorf("log_level must be debug, info, warn or error, got %q", level))
	}
	return errors.Join(errs...)
}

// NewLogger logs to w (os.Stderr when nil) as JSON, or as text when format
// is "text", at level (checked by [CheckLogging]; info when invalid).
func NewLogger(format, level string, w io.Writer) *slog.Logger {
	if w == nil {
		w = os.Stderr
	}
	var lvl slog.Level
	_ = lvl.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lvl, ReplaceAttr: durationsAsText}
	if format == "text" {
		return slog.New(tracing.LogHandler(slog.NewTextHandler(w, opts)))
	}
	return slog.New(tracing.LogHandler(slog.NewJSONHandler(w, opts)))
}

// durationsAsText logs a time.Duration as "30s", not as nanoseconds
// (JSON's default: 30000000000), so a log line reads as the configuration
// it came from.
func durationsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}
