package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// Durations are logged as text in both formats: "30s", never 30000000000.
func TestLoggerWritesDurationsAsText(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		var buf bytes.Buffer
		NewLogger(format, "info", &buf).Info("draining", "drain_grace", 30*time.Second)
		if out := buf.String(); !strings.Contains(out, "30s") || strings.Contains(out, "30000000000") {
			t.Errorf("%s log line %q; want the grace as 30s", format, out)
		}
	}
}
