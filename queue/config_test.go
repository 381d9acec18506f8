package queue_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/queue"
)

func TestConfigDefaultsAreValid(t *testing.T) {
	c := queue.Config{}.WithDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if c.Prefix != "agentfleet" || c.AckWait != 60*time.Second || c.MaxDeliver != 5 || c.EventsMaxAge != 24*time.Hour {
		t.Fatalf("unexpected defaults: %+v", c)
	}
	if c.KeyInactiveThreshold != time.Hour {
		t.Fatalf("KeyInactiveThreshold = %s, want 1h", c.KeyInactiveThreshold)
	}
	if len(c.TerminalKinds) != 1 || c.TerminalKinds[0] != "SESSION_END" {
		t.Fatalf("TerminalKinds = %v", c.TerminalKinds)
	}
}

func TestConfigValidateNamesTheField(t *testing.T) {
	cases := []struct {
		name string
		mut  func(*queue.Config)
		want string
	}{
		{"prefix with dot", func(c *queue.Config) { c.Prefix = "a.b" }, "Config.Prefix"},
		{"negative replicas", func(c *queue.Config) { c.Replicas = -1 }, "Config.Replicas"},
		{"tiny ack wait", func(c *queue.Config) { c.AckWait = time.Millisecond }, "Config.AckWait"},
		{"same stream names", func(c *queue.Config) { c.EventsStream = c.TasksStream }, "must differ"},
		{"payload limit too big", func(c *queue.Config) { c.EventPayloadLimit = int(c.MaxMsgSize) }, "Config.EventPayloadLimit"},
		{"preview above limit", func(c *queue.Config) { c.EventPreviewBytes = c.EventPayloadLimit + 1 }, "Config.EventPreviewBytes"},
		{"terminal kind wildcard", func(c *queue.Config) { c.TerminalKinds = []string{"*"} }, "Config.TerminalKinds"},
		{"negative max deliver", func(c *queue.Config) { c.MaxDeliver = -2 }, "Config.MaxDeliver"},
		{"key threshold under 1s", func(c *queue.Config) { c.KeyInactiveThreshold = 500 * time.Millisecond }, "Config.KeyInactiveThreshold"},
		{"key threshold under AckWait", func(c *queue.Config) { c.KeyInactiveThreshold = c.AckWait - time.Second }, "Config.KeyInactiveThreshold"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := queue.Config{}.WithDefaults()
			tc.mut(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate() = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
}

func TestOpenRejectsMaxMsgSizeAboveServerLimit(t *testing.T) {
	b := setup(t, queue.Config{})
	_, err := queue.Open(b.ctx, b.nc, queue.Config{MaxMsgSize: 64 << 20, EventPayloadLimit: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "max_payload") {
		t.Fatalf("Open = %v, want max_payload error", err)
	}
}

func TestOpenIsIdempotentAndUpdates(t *testing.T) {
	b := setup(t, queue.Config{})
	// A second Open with the same config, then one changing limits, both succeed.
	if _, err := queue.Open(b.ctx, b.nc, queue.Config{}); err != nil {
		t.Fatalf("second Open: %v", err)
	}
	if _, err := queue.Open(b.ctx, b.nc, queue.Config{EventsMaxAge: time.Hour, MaxDeliver: 3}); err != nil {
		t.Fatalf("Open with changed limits: %v", err)
	}
}
