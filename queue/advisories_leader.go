package queue

import (
	"encoding/json"
	"errors"
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
// It subscribes to leaderAdvisories, which PermissionsFor grants the
// dispatcher. stop ends the subscriptions.
func (c *Client) LogStreamLeaders(log *slog.Logger) (stop func() error, err error) {
	var subs []*nats.Subscription
	stop = func() error {
		var errs []error
		for _, s := range subs {
			errs = append(errs, s.Unsubscribe())
		}
		return errors.Join(errs...)
	}
	for _, subject := range leaderAdvisories(c.cfg) {
		sub, err := c.nc.Subscribe(subject, func(m *nats.Msg) { logStreamAdvisory(log, m) })
		if err != nil {
			_ = stop()
			return nil, err
		}
		subs = append(subs, sub)
	}
	return stop, nil
}

// leaderAdvisories are the subjects of the leader-elected and quorum-lost
// advisories of cfg's streams.
func leaderAdvisories(cfg Config) []string {
	var out []string
	for _, stream := range []string{cfg.TasksStream, cfg.EventsStream, cfg.DeadLetterStream} {
		out = append(out, advisoryLeaderElected+"."+stream, advisoryQuorumLost+"."+stream)
	}
	return out
}

func logStreamAdvisory(log *slog.Logger, m *nats.Msg) {
	var a streamAdvisory
	if json.Unmarshal(m.Data, &a) != nil {
		return
	}
	switch {
	case strings.HasPrefix(m.Subject, advisoryLeaderElected+"."):
		log.Info("NATS stream leader elected", "stream", a.Stream, "leader", a.Leader)
	case strings.HasPrefix(m.Subject, advisoryQuorumLost+"."):
		log.Warn("NATS stream lost its quorum: publishes and pulls wait until enough servers are back", "stream", a.Stream)
	}
}
