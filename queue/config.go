package queue

import (
	"errors"
	"fmt"
	"time"
)

// Defaults applied by [Config.WithDefaults] to zero fields.
const (
	DefaultPrefix                  = "agentfleet"
	DefaultTasksStream             = "TASKS"
	DefaultEventsStream            = "EVENTS"
	DefaultDeadLetterStream        = "TASKS_DEADLETTER"
	DefaultReplicas                = 1
	DefaultAckWait                 = 60 * time.Second
	DefaultMaxDeliver              = 5
	DefaultMaxAckPending           = 10_000
	DefaultDuplicateWindow         = 10 * time.Minute
	DefaultEventsMaxAge            = 24 * time.Hour
	DefaultEventsMaxBytes          = 1 << 30 // 1 GiB
	DefaultDeadLetterMaxAge        = 7 * 24 * time.Hour
	DefaultDeadLetterRetryDelay    = 5 * time.Second
	DefaultMaxMsgSize              = 1 << 20 // 1 MiB, the NATS server default max_payload
	DefaultEventPayloadLimit       = 64 << 10
	DefaultEventPreviewBytes       = 4 << 10
	DefaultEventBuffer             = 8192
	DefaultPullWait                = 30 * time.Second
	DefaultPollInterval            = time.Second
	DefaultWorkerInactiveThreshold = time.Hour
	DefaultKeyInactiveThreshold    = time.Hour
	DefaultControlTimeout          = 5 * time.Second
)

// envelopeReserve is the room kept between the event payload limit and the stream's maximum
// message size for the envelope fields, headers and the preview object.
const envelopeReserve = 16 << 10

// minAckWait keeps heartbeats (every AckWait/3) from flooding the server.
const minAckWait = 100 * time.Millisecond

// Config describes the JetStream layout and the client behaviour. The zero value of every field
// means the default named next to it; call WithDefaults, then Validate.
type Config struct {
	// Prefix is the first token of every subject (default "agentfleet"): tasks on
	// <Prefix>.tasks.<queue>, events on <Prefix>.events.<tenant>.<root>.<task>.<kind>, control on
	// <Prefix>.control.<tenant>.<session>.
	Prefix string
	// TasksStream, EventsStream and DeadLetterStream name the streams (defaults "TASKS",
	// "EVENTS", "TASKS_DEADLETTER"). Two fleets sharing one NATS account need different names
	// and prefixes.
	TasksStream      string
	EventsStream     string
	DeadLetterStream string
	// Replicas of every stream (default 1; 3 in a production cluster).
	Replicas int
	// AckWait is how long a pulled task may go without an ack or heartbeat before JetStream
	// redelivers it (default 60 s). Deliveries heartbeat every AckWait/3.
	AckWait time.Duration
	// MaxDeliver is how many times a task is delivered before it becomes a dead letter
	// (default 5).
	MaxDeliver int
	// MaxAckPending caps the tasks in flight (pulled, not yet settled) per queue consumer across
	// the whole fleet (default 10,000). It must exceed the fleet's total session slots.
	MaxAckPending int
	// DuplicateWindow is how long TASKS, and EVENTS for republished events, remember a
	// Nats-Msg-Id to drop a repeated publish (default 10 min).
	DuplicateWindow time.Duration
	// EventsMaxAge and EventsMaxBytes bound the EVENTS stream (defaults 24 h and 1 GiB); the
	// oldest events are dropped first.
	EventsMaxAge   time.Duration
	EventsMaxBytes int64
	// DeadLetterMaxAge bounds how long an unhandled dead-letter advisory is kept (default 7 days).
	DeadLetterMaxAge time.Duration
	// DeadLetterRetryDelay is how long a dead letter whose handler failed waits before it is
	// handed to a handler again (default 5 s).
	DeadLetterRetryDelay time.Duration
	// MaxMsgSize is the largest message any stream accepts (default 1 MiB). It must not exceed
	// the server's max_payload; Open checks.
	MaxMsgSize int32
	// EventPayloadLimit is the largest event data published as is (default 64 KiB); larger data
	// travels as a preview and a reference (see LargePayload). It must stay at least 16 KiB
	// below MaxMsgSize.
	EventPayloadLimit int
	// EventPreviewBytes is how much of a large payload the preview keeps (default 4 KiB).
	EventPreviewBytes int
	// EventBuffer is the capacity of the asynchronous event queue (default 8192). When it is
	// full, Publish waits for room: the session slows down, no event is dropped.
	EventBuffer int
	// TerminalKinds are event kinds published with a confirmation: Publish waits for the
	// stream's acknowledgement (default ["SESSION_END"]).
	TerminalKinds []string
	// PullWait is how long one pull request waits on the server for a task (default 30 s).
	PullWait time.Duration
	// PollInterval is the pull wait used when a Puller serves several sources, so that work
	// on each is seen within about this time (default 1 s).
	PollInterval time.Duration
	// WorkerInactiveThreshold is how long a worker's own consumer survives with nobody pulling
	// before the server deletes it (default 1 h).
	WorkerInactiveThreshold time.Duration
	// KeyInactiveThreshold is how long the consumer of a key's subject (or of a priority level
	// made on demand) survives with nobody pulling or acknowledging before the server deletes
	// it (default 1 h, or AckWait when longer); the next message on the subject makes it
	// again. It must be at least AckWait: a key at its maximum pulls nothing while its tasks
	// run, and what keeps its consumer then is their heartbeats (every AckWait/3), which the
	// server counts as activity.
	KeyInactiveThreshold time.Duration
	// ControlTimeout bounds a control request when the caller's context has no deadline
	// (default 5 s).
	ControlTimeout time.Duration
}

// WithDefaults returns a copy of c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	setDefault(&c.Prefix, DefaultPrefix)
	setDefault(&c.TasksStream, DefaultTasksStream)
	setDefault(&c.EventsStream, DefaultEventsStream)
	setDefault(&c.DeadLetterStream, DefaultDeadLetterStream)
	setDefault(&c.Replicas, DefaultReplicas)
	setDefault(&c.AckWait, DefaultAckWait)
	setDefault(&c.MaxDeliver, DefaultMaxDeliver)
	setDefault(&c.MaxAckPending, DefaultMaxAckPending)
	setDefault(&c.DuplicateWindow, DefaultDuplicateWindow)
	setDefault(&c.EventsMaxAge, DefaultEventsMaxAge)
	setDefault(&c.EventsMaxBytes, DefaultEventsMaxBytes)
	setDefault(&c.DeadLetterMaxAge, DefaultDeadLetterMaxAge)
	setDefault(&c.DeadLetterRetryDelay, DefaultDeadLetterRetryDelay)
	setDefault(&c.MaxMsgSize, DefaultMaxMsgSize)
	setDefault(&c.EventPayloadLimit, DefaultEventPayloadLimit)
	setDefault(&c.EventPreviewBytes, DefaultEventPreviewBytes)
	setDefault(&c.EventBuffer, DefaultEventBuffer)
	setDefault(&c.PullWait, DefaultPullWait)
	setDefault(&c.PollInterval, DefaultPollInterval)
	setDefault(&c.WorkerInactiveThreshold, DefaultWorkerInactiveThreshold)
	setDefault(&c.KeyInactiveThreshold, max(DefaultKeyInactiveThreshold, c.AckWait))
	setDefault(&c.ControlTimeout, DefaultControlTimeout)
	if c.TerminalKinds == nil {
		c.TerminalKinds = []string{"SESSION_END"}
	}
	return c
}

func setDefault[T comparable](field *T, def T) {
	var zero T
	if *field == zero {
		*field = def
	}
}

// Validate reports every invalid field, each error naming the field, the value and the rule.
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf("queue.Config."+format, args...))
		}
	}
	check(isToken(c.Prefix), "Prefix must be one subject token (letters, digits, '-' or '_'), got %q", c.Prefix)
	for _, f := range [][2]string{{"TasksStream", c.TasksStream}, {"EventsStream", c.EventsStream}, {"DeadLetterStream", c.DeadLetterStream}} {
		check(isToken(f[1]), "%s must be a stream name of letters, digits, '-' or '_', got %q", f[0], f[1])
	}
	check(c.TasksStream != c.EventsStream && c.TasksStream != c.DeadLetterStream && c.EventsStream != c.DeadLetterStream,
		"TasksStream, EventsStream and DeadLetterStream must differ, got %q, %q and %q", c.TasksStream, c.EventsStream, c.DeadLetterStream)
	check(c.Replicas >= 1 && c.Replicas <= 5, "Replicas must be between 1 and 5, got %d", c.Replicas)
	check(c.AckWait >= minAckWait, "AckWait must be >= %s, got %s", minAckWait, c.AckWait)
	check(c.MaxDeliver >= 1, "MaxDeliver must be >= 1, got %d", c.MaxDeliver)
	check(c.MaxAckPending >= 1, "MaxAckPending must be >= 1, got %d", c.MaxAckPending)
	check(c.DuplicateWindow > 0, "DuplicateWindow must be > 0, got %s", c.DuplicateWindow)
	check(c.EventsMaxAge > 0, "EventsMaxAge must be > 0, got %s", c.EventsMaxAge)
	check(c.EventsMaxBytes > 0, "EventsMaxBytes must be > 0, got %d", c.EventsMaxBytes)
	check(c.DeadLetterMaxAge > 0, "DeadLetterMaxAge must be > 0, got %s", c.DeadLetterMaxAge)
	check(c.DeadLetterRetryDelay > 0, "DeadLetterRetryDelay must be > 0, got %s", c.DeadLetterRetryDelay)
	check(c.MaxMsgSize >= 2*envelopeReserve, "MaxMsgSize must be >= %d bytes, got %d", 2*envelopeReserve, c.MaxMsgSize)
	check(c.EventPayloadLimit >= 1 && c.EventPayloadLimit <= int(c.MaxMsgSize)-envelopeReserve,
		"EventPayloadLimit must be between 1 and MaxMsgSize-%d (%d), got %d", envelopeReserve, int(c.MaxMsgSize)-envelopeReserve, c.EventPayloadLimit)
	check(c.EventPreviewBytes >= 1 && c.EventPreviewBytes <= c.EventPayloadLimit,
		"EventPreviewBytes must be between 1 and EventPayloadLimit (%d), got %d", c.EventPayloadLimit, c.EventPreviewBytes)
	check(c.EventBuffer >= 1, "EventBuffer must be >= 1, got %d", c.EventBuffer)
	for _, k := range c.TerminalKinds {
		check(isToken(k), "TerminalKinds entry %q must be one subject token", k)
	}
	check(c.PullWait >= 100*time.Millisecond, "PullWait must be >= 100ms, got %s", c.PullWait)
	check(c.PollInterval >= 100*time.Millisecond, "PollInterval must be >= 100ms, got %s", c.PollInterval)
	check(c.WorkerInactiveThreshold >= time.Second, "WorkerInactiveThreshold must be >= 1s, got %s", c.WorkerInactiveThreshold)
	check(c.KeyInactiveThreshold >= time.Second && c.KeyInactiveThreshold >= c.AckWait,
		"KeyInactiveThreshold must be >= 1s and >= AckWait (%s), got %s", c.AckWait, c.KeyInactiveThreshold)
	check(c.ControlTimeout > 0, "ControlTimeout must be > 0, got %s", c.ControlTimeout)
	return errors.Join(errs...)
}
