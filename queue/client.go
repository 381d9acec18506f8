package queue

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Client is the fleet's handle on JetStream: it owns the stream layout of one Config and makes
// publishers, pullers, subscribers and control endpoints. It does not own the NATS connection:
// the caller closes that after closing what the Client made. A Client is safe for concurrent use.
type Client struct {
	cfg     Config
	nc      *nats.Conn
	js      jetstream.JetStream
	subj    Subjects
	tasks   jetstream.Stream
	metrics *Metrics
	hinted  sync.Map // subject → unix nanoseconds of its last level hint (levelhint.go)
	batchState
}

// Open applies cfg's defaults, validates it, and creates or updates the TASKS, EVENTS and
// dead-letter streams so that they match it. It is idempotent: every worker and dispatcher calls
// it at start-up. While a JetStream cluster is still forming (no meta leader yet, peers not yet
// seen online) it retries with backoff for up to two minutes or until ctx ends. It fails with a
// clear error when the server is older than MinServerVersion, cannot hold cfg.MaxMsgSize, or
// an existing stream cannot be changed to the wanted configuration.
func Open(ctx context.Context, nc *nats.Conn, cfg Config) (*Client, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkServerVersion(nc.ConnectedServerVersion()); err != nil {
		return nil, err
	}
	if max := nc.MaxPayload(); max > 0 && int64(cfg.MaxMsgSize) > max {
		return nil, fmt.Errorf("queue.Config.MaxMsgSize (%d) exceeds the NATS server's max_payload (%d): lower MaxMsgSize or raise max_payload in the server configuration", cfg.MaxMsgSize, max)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("queue: JetStream context: %w", err)
	}
	c := &Client{cfg: cfg, nc: nc, js: js, subj: Subjects{prefix: cfg.Prefix}, metrics: &Metrics{}}
	if err := retryWhileForming(ctx, c.ensureStreams); err != nil {
		return nil, err
	}
	return c, nil
}

// Config returns the effective configuration (defaults applied).
func (c *Client) Config() Config { return c.cfg }

// Subjects returns the subject builder of the configured prefix.
func (c *Client) Subjects() Subjects { return c.subj }

// Metrics returns the live counters shared by everything this Client made.
func (c *Client) Metrics() *Metrics { return c.metrics }

func (c *Client) ensureStreams(ctx context.Context) error {
	tasks, err := c.ensureStream(ctx, c.tasksStreamConfig())
	if err != nil {
		return err
	}
	c.tasks = tasks
	if _, err := c.ensureStream(ctx, c.eventsStreamConfig()); err != nil {
		return err
	}
	_, err = c.ensureStream(ctx, c.deadLetterStreamConfig())
	return err
}

func (c *Client) ensureStream(ctx context.Context, sc jetstream.StreamConfig) (jetstream.Stream, error) {
	if s, err := c.js.Stream(ctx, sc.Name); err == nil && upToDate(s.CachedInfo().Config, sc) {
		return s, nil
	}
	s, err := c.js.CreateOrUpdateStream(ctx, sc)
	if err != nil {
		hint := ""
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			hint = ": enable JetStream on the server (nats-server -js) or run `agentfleet-dev dev`"
		}
		return nil, fmt.Errorf("queue: create or update stream %s (subjects %v): %w%s", sc.Name, sc.Subjects, err, hint)
	}
	return s, nil
}

// upToDate reports whether every field want sets has that value in have.
// Open sends no update for a stream that is already as wanted: every
// worker opens the queue at start, and an update of a stream while another
// process creates a consumer on it is a needless meta-leader proposal (and
// trips a data race inside nats-server's file store under -race).
func upToDate(have, want jetstream.StreamConfig) bool {
	hv, wv := reflect.ValueOf(have), reflect.ValueOf(want)
	for i := range wv.NumField() {
		f := wv.Field(i)
		if !wv.Type().Field(i).IsExported() || f.IsZero() {
			continue
		}
		if !reflect.DeepEqual(f.Interface(), hv.Field(i).Interface()) {
			return false
		}
	}
	return true
}

func (c *Client) tasksStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        c.cfg.TasksStream,
		Description: "agentfleet work: tasks to start, parked sessions to resume, inputs to deliver",
		Subjects:    []string{c.subj.AllTasks()},
		Retention:   jetstream.WorkQueuePolicy,
		Storage:     jetstream.FileStorage,
		Replicas:    c.cfg.Replicas,
		Duplicates:  c.cfg.DuplicateWindow,
		MaxMsgSize:  c.cfg.MaxMsgSize,
	}
}

func (c *Client) eventsStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        c.cfg.EventsStream,
		Description: "agentfleet session events, replayable by dashboards",
		Subjects:    []string{c.subj.AllEvents()},
		Retention:   jetstream.LimitsPolicy,
		Discard:     jetstream.DiscardOld,
		Storage:     jetstream.FileStorage,
		Replicas:    c.cfg.Replicas,
		MaxAge:      c.cfg.EventsMaxAge,
		MaxBytes:    c.cfg.EventsMaxBytes,
		Duplicates:  c.cfg.DuplicateWindow, // a republished event (see EventPublisher) is stored once
		MaxMsgSize:  c.cfg.MaxMsgSize,
	}
}

func (c *Client) deadLetterStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        c.cfg.DeadLetterStream,
		Description: "JetStream advisories of agentfleet tasks that exhausted their deliveries or were terminated",
		Subjects: []string{
			advisoryMaxDeliveries + "." + c.cfg.TasksStream + ".*",
			advisoryTerminated + "." + c.cfg.TasksStream + ".*",
		},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   jetstream.FileStorage,
		Replicas:  c.cfg.Replicas,
		MaxAge:    c.cfg.DeadLetterMaxAge,
	}
}
