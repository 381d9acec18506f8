// Package queue is agentfleet's JetStream layer: the streams and consumers, publishing work,
// pulling it one message per free slot, dead letters, session events and session control.
// Nothing above this package sees a jetstream.Msg: callers get Delivery, DeadLetter,
// ReceivedEvent and ControlReply values.
//
// # Layout
//
// Open creates or updates, idempotently, three streams (names and the subject prefix are
// configurable; see Config):
//
//   - TASKS, work-queue retention, file storage, subjects <prefix>.tasks.>: messages naming work
//     (TaskMessage: start, resume or input a task). <prefix>.tasks.<queue> is a shared queue,
//     <prefix>.tasks.worker.<worker-id> one worker's own work. Nats-Msg-Id duplicates are dropped
//     within Config.DuplicateWindow.
//   - EVENTS, limits retention (Config.EventsMaxAge, Config.EventsMaxBytes), subjects
//     <prefix>.events.<tenant>.<root-task>.<task>.<kind>: one Event envelope per session event.
//     The tenant comes first, so <prefix>.events.<tenant>.> is one tenant's events and a NATS
//     permission can grant exactly that (see Permissions).
//   - TASKS_DEADLETTER, capturing the server's max-delivery and termination advisories for TASKS,
//     so that no dead letter is lost while no dispatcher runs.
//
// Control uses core NATS request-reply on <prefix>.control.<tenant>.<session>; nothing is stored.
//
// # Publishing work
//
// Client.Enqueue (a shared queue), Client.EnqueueToWorker (one worker) and Client.Send publish a
// TaskMessage and wait for the stream's acknowledgement. A non-empty message id is the
// Nats-Msg-Id: a retried submit with the same id is stored once (EnqueueResult.Duplicate).
// A deterministic id (the fleet derives a resume's from the parent and the wait) makes
// publishers that race publish once. Messages carry the task id
// also in the Agentfleet-Task-Id header. Messages name work, they do not carry it: the fleet keeps
// specs, history and inputs in the store.
//
// # Pulling work
//
// Client.NewPuller creates the durable pull consumers it serves: one per fixed priority level of
// each shared queue (1, 0 and -1: see priority.go; ToQueueAt picks a level) and, as Serve meets
// them, one per other level and per concurrency key of a level (fairness.go; ToQueueFor picks
// a key: the key's maximum of running tasks is kept by its gate of tokens (gate.go), free slots
// go to keys by weight), shared by every worker (work-queue streams need non-overlapping consumer
// filters, so there is exactly one consumer per subject), and optionally the worker's own.
//
// The server deletes the consumer of a key or of a level made on demand after
// Config.KeyInactiveThreshold without pulls or acks; the next message on its subject makes it
// again. A key at its maximum pulls nothing while its tasks run, but their heartbeats (every
// AckWait/3, and the threshold is at least AckWait) keep its consumer. The worker's own
// consumer is deleted after Config.WorkerInactiveThreshold without pulls (its stored messages
// stay and go to the consumer made by the next NewPuller with that id). Client.OrphanedWorkers
// finds the workers whose consumer is gone while their subject holds messages, and
// Client.MoveWorkerMessages moves that work elsewhere and deletes the consumer.
//
// A worker reserves capacity before it pulls, and the slot is freed when the Delivery is settled.
// Puller.Serve runs one pull loop per source (the worker's own subject and each shared queue):
// each reserves the free slots (up to 128), takes that many messages at most, the highest
// priority level first (a lower level skipped for 10 messages is asked first for one), hands
// each Delivery with its slot to the caller and gives back the slots no message
// took; a drained source waits in a pull request of one message, so work on any source is taken
// at once. Puller.Claim acquires one slot, then pulls one message; Puller.Pull pulls one for a
// caller that manages capacity itself, preferring the worker's own subject and polling the
// sources in turn (Config.PollInterval each).
//
// Delivery guarantees are JetStream's: at least once. From the pull until the Delivery is
// settled, a goroutine owned by the Delivery sends InProgress every AckWait/3. The caller settles
// each Delivery exactly once:
//
//   - Ack(ctx): done or parked; waits for the server's confirmation (double ack).
//   - Nak(ctx, delay): retryable failure (a provider's retry-after); redelivered after delay.
//   - Term(ctx, reason): permanent failure (a corrupt message: Delivery.DecodeErr); never
//     redelivered; reaches the dead-letter handler.
//   - Abandon(): stop heartbeating; redelivered after AckWait (a lost connection, or tests).
//
// A message delivered Config.MaxDeliver times without an ack is a dead letter.
//
// # Dead letters
//
// Client.WatchDeadLetters hands each dead task message to a DeadLetterHandler with the reason
// (max_deliveries or terminated), the task id, the stream sequence and, when TASKS still has
// it, the body. Every watcher shares one durable consumer, so a dead letter is handled by one
// dispatcher, at least once: handlers must be idempotent (the fleet marks the task failed with
// reason dead_letter by compare-and-set, which ignores tasks already final). A max-delivery
// dead letter's message is deleted from TASKS after the handler succeeds; a handler error retries
// it after Config.DeadLetterRetryDelay. Termination advisories carry no headers and the message
// is already gone, so Delivery.Term writes the task id into the reason ("agentfleet-task <id>:
// <reason>"); DeadLetter.TermReason is the caller's reason.
//
// # Events
//
// EventPublisher.Publish does not make a session wait for each acknowledgement: events go on a
// bounded queue (Config.EventBuffer) that one goroutine publishes asynchronously, in order. No
// event is dropped: one the stream does not acknowledge is published again, with its id as
// Nats-Msg-Id so the stream stores it once (within Config.DuplicateWindow), and while the queue
// is full Publish waits for room, which slows the session down. Terminal kinds
// (Config.TerminalKinds, default SESSION_END) and PublishConfirmed also wait for the stream's
// acknowledgement. A republished event lands after later ones: consumers order a session's
// events, and dedupe them, by (SessionID, Seq). Data larger than
// Config.EventPayloadLimit (default 64 KiB, always below the stream's maximum message size) is
// replaced by a LargePayload: a preview, the original size, the small fields of the original
// object, and a PayloadRef ({"ref":"tool_output","session_id":...,"call_id":...} when the data
// has a call_id) to the full text in the store.
//
// Client.SubscribeEvents follows a task tree (EventFilter.RootTaskID), a task, or everything,
// within the tenants of EventFilter.Tenants (all when empty),
// from the start of the stream, from a stream sequence, or new events only, through an ordered
// consumer; each ReceivedEvent carries its StreamSeq for resuming.
//
// # Control
//
// The worker running a session calls Client.ServeControl(tenant, sessionID, handler) and the
// returned stop when the session stops running; the subject is <prefix>.control.<tenant>.<session>,
// so a worker pool's NATS user may be limited to its tenants' sessions (PermissionsFor).
// Client.Control(ctx, tenant, sessionID, req) sends steer, follow_up, abort, configure, status or
// compact and returns the ControlReply; ErrNotRunning when no worker serves the session (NATS "no
// responders"), ErrControlRefused when the handler answered ok=false. Approve and deny go to the
// dispatchers on <prefix>.control.approvals (ServeApprovals, AnswerApproval).
//
// # Metrics
//
// Client.Metrics returns atomic counters shared by everything the Client made (enqueued,
// duplicates, pulled, redelivered, settled by kind, heartbeat errors, dead letters, events
// published/dropped/failed/large). Client.QueueLag and Client.WorkerLag read a consumer's
// backlog (NumPending and NumAckPending) for the queue-lag metric and autoscaling.
//
// # Concurrency and ownership
//
// Client, Puller, EventPublisher and the ControlHandler registration are safe for concurrent use.
// A Delivery belongs to the goroutine that pulled it until settled; its settling methods are
// safe to race (the first wins, later ones return ErrSettled). An EventSubscription's Next is for
// one goroutine. The caller owns the *nats.Conn: close EventPublishers (which flush), stop
// watchers, subscriptions and control registrations, then close the connection.
//
// # Permissions
//
// PermissionsFor returns what each Role (dispatcher, worker, observer of some tenants) may publish
// and subscribe in the layout of a Config, JetStream API subjects included: the least privilege the
// shipped NATS configurations and dev mode enforce (docs/operations.md, "NATS permissions").
// Subpackage natsauth turns it into nats-server user permissions, nats.conf text and
// decentralized-auth scoped signing keys. Everything this package does for a role stays within its
// permissions; a new kind of NATS call needs its subjects added there.
//
// Connect builds a connection from ConnectOptions (URL, user and password, token, nkey seed
// file, creds file, TLS) with reconnects enabled. The subpackage natstest starts in-process
// servers for tests; embedded runs one for dev mode.
package queue
