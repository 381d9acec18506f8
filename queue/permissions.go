package queue

import (
	"errors"
	"fmt"
	"slices"
)

// Role is what a NATS user of the fleet does, and so what it may publish
// and subscribe (see Permissions).
type Role string

// The roles.
const (
	// RoleDispatcher publishes work, reads events, sends control requests
	// and alone serves approvals. It cannot claim a task.
	RoleDispatcher Role = "dispatcher"
	// RoleWorker claims and runs tasks, publishes their events and serves
	// their sessions' control subjects. It cannot publish or serve
	// approvals.
	RoleWorker Role = "worker"
	// RoleObserver subscribes to its tenants' event subjects and does
	// nothing else: no publish, no JetStream API, no replay.
	RoleObserver Role = "observer"
)

// Buckets are the key-value buckets (KeyValue) the fleet's components
// open: budgets (fleet/budget), rate limits (llm/ratelimit via the
// worker) and pauses (fleet/internal/holds). Permissions grants the dispatcher and the workers these and no
// other bucket; a component that opens another needs it added here.
var Buckets = []string{"budgets", "ratelimits", "holds"}

// SubjectRules are the subjects a user may (Allow) and may not (Deny)
// publish or subscribe to. NATS lets a deny win over an allow; an empty
// Allow with a Deny allows everything not denied.
type SubjectRules struct {
	Allow []string
	Deny  []string
}

// Permissions is what one NATS user may do: the subjects it may publish
// and subscribe to, and whether it may answer a request it received (one
// reply on the request's reply subject, whatever that is: NATS's
// allow_responses).
type Permissions struct {
	Publish        SubjectRules
	Subscribe      SubjectRules
	AllowResponses bool
}

// PermissionsFor returns the least privilege of role in the fleet laid out
// by cfg (its prefix and stream names; zero fields take the defaults). An
// observer is limited to tenants, at least one. A worker given tenants is
// a pool serving only those tenants' tasks: it may serve and send control
// requests on their sessions' subjects only; a worker given none serves
// every tenant. The dispatcher takes none (it serves every tenant).
//
// The table, with P the prefix and the default stream names (docs/operations.md,
// "NATS permissions", explains each line):
//
//	dispatcher publish: P.tasks.>, P.levels.> (level hints), P.control.> (session control and approvals),
//	    the JetStream API of TASKS (stream info, create, update; message get and
//	    delete for dead letters; consumer info and lists), of EVENTS and
//	    TASKS_DEADLETTER (also consumers: create, next, delete; acks), and of
//	    the KV buckets ($KV.P_<bucket>.>, their streams KV_P_<bucket>)
//	    deny: $JS.API.CONSUMER.MSG.NEXT.TASKS.>, $JS.ACK.TASKS.>,
//	    $JS.API.CONSUMER.*CREATE.TASKS... (it cannot claim a task)
//	dispatcher subscribe: P.control.approvals, _INBOX.>
//	worker publish: P.tasks.>, P.levels.>, P.events.>, the control subjects below,
//	    the JetStream API of TASKS with pulls and acks, EVENTS, TASKS_DEADLETTER
//	    and the KV buckets; deny P.control.approvals
//	worker subscribe: the control subjects below, P.levels.>, _INBOX.>; deny P.control.approvals
//	    control subjects of a worker of every tenant: P.control.> (which
//	    also covers the pre-tenant P.control.<session> of the previous release)
//	    control subjects of a pool: P.control.<tenant>.* for each of its tenants
//	observer subscribe: P.events.<tenant>.> for each tenant; publish: nothing
//
// The dispatcher and the workers may answer requests (allow_responses).
// Neither may delete or purge a stream.
func PermissionsFor(cfg Config, role Role, tenants ...string) (Permissions, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Permissions{}, err
	}
	s := Subjects{prefix: cfg.Prefix}
	switch role {
	case RoleDispatcher:
		if len(tenants) > 0 {
			return Permissions{}, fmt.Errorf("queue: the %s role serves every tenant; name tenants only for %s or %s", role, RoleWorker, RoleObserver)
		}
	case RoleObserver:
		if len(tenants) == 0 {
			return Permissions{}, errors.New("queue: an observer needs at least one tenant whose events it may read")
		}
	case RoleWorker:
	default:
		return Permissions{}, fmt.Errorf("queue: role %q must be %s, %s or %s", role, RoleDispatcher, RoleWorker, RoleObserver)
	}
	for _, t := range tenants {
		if err := CheckTenant(t); err != nil {
			return Permissions{}, err
		}
	}
	switch role {
	case RoleDispatcher:
		return dispatcherPermissions(cfg, s), nil
	case RoleWorker:
		return workerPermissions(cfg, s, tenants), nil
	default:
		return observerPermissions(s, tenants), nil
	}
}

func dispatcherPermissions(cfg Config, s Subjects) Permissions {
	pub := []string{s.AllTasks(), s.AllLevels(), s.AllControl(), jsInfo}
	pub = append(pub, streamManage(cfg.TasksStream)...)
	pub = append(pub, streamMsgGet(cfg.TasksStream), streamMsgDelete(cfg.TasksStream))
	pub = append(pub, consumerRead(cfg.TasksStream)...)
	pub = append(pub, fullStream(cfg.EventsStream)...)
	pub = append(pub, fullStream(cfg.DeadLetterStream)...)
	pub = append(pub, bucketSubjects(cfg.Prefix)...)
	return Permissions{
		Publish: SubjectRules{Allow: pub, Deny: []string{
			"$JS.API.CONSUMER.MSG.NEXT." + cfg.TasksStream + ".>",
			"$JS.ACK." + cfg.TasksStream + ".>",
			"$JS.API.CONSUMER.CREATE." + cfg.TasksStream + ".>",
			"$JS.API.CONSUMER.CREATE." + cfg.TasksStream,
			"$JS.API.CONSUMER.DURABLE.CREATE." + cfg.TasksStream + ".>",
		}},
		Subscribe:      SubjectRules{Allow: append([]string{s.Approvals(), s.Inbox()}, leaderAdvisories(cfg)...)},
		AllowResponses: true,
	}
}

func workerPermissions(cfg Config, s Subjects, tenants []string) Permissions {
	control := []string{s.AllControl()}
	if len(tenants) > 0 {
		control = control[:0]
		for _, t := range tenants {
			if c := s.TenantControl(t); !slices.Contains(control, c) {
				control = append(control, c)
			}
		}
	}
	pub := []string{s.AllTasks(), s.AllLevels(), s.AllEvents()}
	pub = append(pub, control...)
	pub = append(pub, jsInfo)
	pub = append(pub, fullStream(cfg.TasksStream)...)
	pub = append(pub, streamMsgDelete(cfg.TasksStream))
	pub = append(pub, fullStream(cfg.EventsStream)...)
	pub = append(pub, fullStream(cfg.DeadLetterStream)...)
	pub = append(pub, bucketSubjects(cfg.Prefix)...)
	return Permissions{
		Publish:        SubjectRules{Allow: pub, Deny: []string{s.Approvals()}},
		Subscribe:      SubjectRules{Allow: append(control, s.AllLevels(), s.Inbox()), Deny: []string{s.Approvals()}},
		AllowResponses: true,
	}
}

func observerPermissions(s Subjects, tenants []string) Permissions {
	var sub []string
	for _, t := range tenants {
		if e := s.TenantEvents(t); !slices.Contains(sub, e) {
			sub = append(sub, e)
		}
	}
	return Permissions{Publish: SubjectRules{Deny: []string{">"}}, Subscribe: SubjectRules{Allow: sub}}
}

// jsInfo is the account's JetStream information (limits and usage).
const jsInfo = "$JS.API.INFO"

// streamManage: look up, create and update (never delete or purge) a stream.
func streamManage(stream string) []string {
	return []string{"$JS.API.STREAM.INFO." + stream, "$JS.API.STREAM.CREATE." + stream, "$JS.API.STREAM.UPDATE." + stream}
}

func streamMsgGet(stream string) string    { return "$JS.API.STREAM.MSG.GET." + stream }
func streamMsgDelete(stream string) string { return "$JS.API.STREAM.MSG.DELETE." + stream }

// consumerRead: a stream's consumers' state and lists.
func consumerRead(stream string) []string {
	return []string{"$JS.API.CONSUMER.INFO." + stream + ".*", "$JS.API.CONSUMER.LIST." + stream, "$JS.API.CONSUMER.NAMES." + stream}
}

// fullStream is what a consumer of stream needs, besides managing it:
// reading messages (also by direct get), making, pulling from, acknowledging
// and deleting consumers, and answering flow control (ordered push
// consumers, which KV watchers use).
func fullStream(stream string) []string {
	out := streamManage(stream)
	out = append(out, streamMsgGet(stream), "$JS.API.DIRECT.GET."+stream, "$JS.API.DIRECT.GET."+stream+".>")
	out = append(out, consumerRead(stream)...)
	return append(out,
		"$JS.API.CONSUMER.CREATE."+stream, "$JS.API.CONSUMER.CREATE."+stream+".>",
		"$JS.API.CONSUMER.DURABLE.CREATE."+stream+".*",
		"$JS.API.CONSUMER.DELETE."+stream+".*",
		"$JS.API.CONSUMER.MSG.NEXT."+stream+".*",
		"$JS.ACK."+stream+".>", "$JS.FC."+stream+".>")
}

// bucketSubjects: the KV buckets' streams and their key subjects.
func bucketSubjects(prefix string) []string {
	var out []string
	for _, b := range Buckets {
		name := prefix + "_" + b
		out = append(out, fullStream("KV_"+name)...)
		out = append(out, "$KV."+name+".>")
	}
	return out
}
