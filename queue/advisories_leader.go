package queue

import (
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/nats-io/nats.go"
)

// The advisories JetStream publishes when a replicated stream changes
// hands; the stream's name follows.
const (
	advisoryLeaderElected = "$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED"
	advisoryQuorumLost    = "$JS.EVENT.ADVISORY.STREAM.QUORUM_LOST"
)

// streamAdvisory is the part of both advisories that is logged.
type streamAdvisory struct {
	Stream string `json:"stream"`
	Leader string `json:"leader"` // LEADER_ELECTED: the new leader's server name
}

// LogStreamLeaders logs, once per advisory, each new leader elected for
// the fleet's streams (info) and each loss of a stream's quorum (warn),
// naming the stream and the server: without it a stream leader's death
// left no line anywhere, though every publish and pull waited out the
// election. The dispatcher calls it, so a fleet logs each change once.
// The user needs the right to subscribe to $JS.EVENT.ADVISORY.STREAM.>.
// stop ends the subscription.
func (c *Client) LogStreamLeaders(log *slog.Logger) (stop func() error, err error) {
	ours := map[string]bool{c.cfg.TasksStream: true, c.cfg.EventsStream: true, c.cfg.DeadLetterStream: true}
	sub, err := c.nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.>", func(m *nats.Msg) {
		var a streamAdvisory
		if json.Unmarshal(m.Data, &a) != nil || !ours[a.Stream] {
			return
		}
		switch {
		case strings.HasPrefix(m.Subject, advisoryLeaderElected+"."):
			log.Info("NATS stream leader elected", "stream", a.Stream, "leader", a.Leader)
		case strings.HasPrefix(m.Subject, advisoryQuorumLost+"."):
			log.Warn("NATS stream lost its quorum: publishes and pulls wait until enough servers are back",
				"stream", a.Stream, "server", m.Header.Get("Nats-Server-Name"))
		}
	})
	if err != nil {
		return nil, err
	}
	return sub.Unsubscribe, nil
}
