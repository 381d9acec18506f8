package queue

import (
	"fmt"

	"github.com/nats-io/nats.go"
)

// Subject tokens used after the prefix.
const (
	tasksToken   = "tasks"
	workerToken  = "worker"
	eventsToken  = "events"
	controlToken = "control"
)

// isToken reports whether s is a non-empty NATS subject token made only of ASCII letters,
// digits, '-' and '_'. Ids (UUIDs, worker names), queue names and event kinds must be tokens, so
// they can never add a level to a subject or act as a wildcard.
func isToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
		default:
			return false
		}
	}
	return true
}

// CheckWorkerID is the rule for worker ids: a subject token, since a worker's own subject
// ends with its id.
func CheckWorkerID(id string) error { return checkToken("worker id", id) }

// checkToken returns an error naming what is wrong with a token value.
func checkToken(what, s string) error {
	if !isToken(s) {
		return fmt.Errorf("queue: %s %q must be 1 to 128 letters, digits, '-' or '_'", what, s)
	}
	return nil
}

// CheckQueueName is the one rule for queue names, used by the fleet's specs and configuration
// as well as here: a subject token (1 to 128 ASCII letters, digits, '-' or '_') other than
// "worker", the token that introduces per-worker subjects.
func CheckQueueName(name string) error {
	if err := checkToken("queue name", name); err != nil {
		return err
	}
	if name == workerToken {
		return fmt.Errorf("queue: queue name %q is reserved for per-worker subjects; choose another", name)
	}
	return nil
}

// Subjects builds the subjects of one prefix. Obtain it from [Client.Subjects].
type Subjects struct{ prefix string }

// Tasks returns the subject of a queue: <prefix>.tasks.<queue>.
func (s Subjects) Tasks(queue string) string { return s.prefix + "." + tasksToken + "." + queue }

// Worker returns the subject of one worker's own work: <prefix>.tasks.worker.<worker-id>.
func (s Subjects) Worker(workerID string) string {
	return s.prefix + "." + tasksToken + "." + workerToken + "." + workerID
}

// AllTasks is the TASKS stream's subject filter: <prefix>.tasks.>.
func (s Subjects) AllTasks() string { return s.prefix + "." + tasksToken + ".>" }

// DefaultTenant is the tenant of an event whose Tenant is empty: a task
// stored before tasks named their tenant. It is the same word as
// fleet.DefaultTenant.
const DefaultTenant = "default"

// CheckTenant is the rule for a tenant name in a subject: one subject token
// (1 to 128 ASCII letters, digits, '-' or '_').
func CheckTenant(tenant string) error { return checkToken("tenant", tenant) }

// Event returns the subject of one event:
// <prefix>.events.<tenant>.<root>.<task>.<kind>. The tenant comes first so
// that one subject filter, <prefix>.events.<tenant>.>, is everything a
// tenant may see (TenantEvents), and a NATS permission can grant exactly
// that. Any argument may be the wildcard "*".
func (s Subjects) Event(tenant, root, task, kind string) string {
	return s.prefix + "." + eventsToken + "." + tenant + "." + root + "." + task + "." + kind
}

// TenantEvents is every event subject of one tenant:
// <prefix>.events.<tenant>.>.
func (s Subjects) TenantEvents(tenant string) string {
	return s.prefix + "." + eventsToken + "." + tenant + ".>"
}

// legacyEvent is the subject events had before they carried the tenant,
// <prefix>.events.<root>.<task>.<kind>: EVENTS may still hold such events
// (until they age out) after an upgrade, and LastEvent reads them.
func (s Subjects) legacyEvent(root, task, kind string) string {
	return s.prefix + "." + eventsToken + "." + root + "." + task + "." + kind
}

// AllEvents is the EVENTS stream's subject filter: <prefix>.events.>.
func (s Subjects) AllEvents() string { return s.prefix + "." + eventsToken + ".>" }

// Control returns the request-reply subject of a session of tenant:
// <prefix>.control.<tenant>.<session>. The tenant comes first so that one
// subject filter, <prefix>.control.<tenant>.* (TenantControl), is every
// session of a tenant, and a worker pool's NATS permission can grant
// exactly its tenants' sessions (PermissionsFor).
func (s Subjects) Control(tenant, sessionID string) string {
	return s.prefix + "." + controlToken + "." + tenant + "." + sessionID
}

// TenantControl matches every session's control subject of one tenant:
// <prefix>.control.<tenant>.*.
func (s Subjects) TenantControl(tenant string) string {
	return s.prefix + "." + controlToken + "." + tenant + ".*"
}

// AllControl matches everything under the control prefix: every tenant's
// session control subjects, the approvals subject and the subjects of
// sessions before they carried the tenant (<prefix>.control.<session>):
// <prefix>.control.>.
func (s Subjects) AllControl() string { return s.prefix + "." + controlToken + ".>" }

// Approvals is the subject approvals are answered on:
// <prefix>.control.approvals (see ServeApprovals). It has one token fewer
// than a session's control subject, so no tenant or session name can make
// a session subject equal it or fall under it.
func (s Subjects) Approvals() string {
	return s.prefix + "." + controlToken + "." + ApprovalsSession
}

// Inbox matches the reply subjects of requests and JetStream API calls made
// by a connection with the default inbox prefix: _INBOX.>.
func (s Subjects) Inbox() string { return nats.InboxPrefix + ">" }

// queueConsumer and workerConsumer name the durable consumers.
func queueConsumer(queue string) string     { return "queue-" + queue }
func workerConsumer(workerID string) string { return "worker-" + workerID }
