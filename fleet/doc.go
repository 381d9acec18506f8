// Package fleet is the domain that the two sides of the fleet share: the
// task spec a submitter sends (TaskSpec, its defaults filled by
// Defaults.Apply, decoded from the store with DecodeSpec, checked with
// Validate), the result a worker stores (TaskResult), the reasons a task
// ends with, what a parked task waits for (WaitingFor, read with
// DecodeWaitingFor), the final SESSION_END event, and the address of a
// session (SessionSubject). Where a task's messages go and under which
// deduplication ids is the router's (fleet/internal/taskops).
//
// # Tasks and sessions
//
// A task is a store.Task whose Spec is a TaskSpec. It has exactly one
// session, whose id is the task id: its turns, tool outputs and usage are
// stored under that id, its events carry it as session_id and its control
// subject is <prefix>.control.<tenant>.<task-id>, whichever worker runs it.
//
// # One package per audience
//
// The packages below this one each serve one audience, and imports run one
// way (docs/architecture.md draws them):
//
//   - api: the HTTP wire types, shared by the two ends of the API;
//   - approval: a call the permission policy asks about parks its task until a person answers;
//   - bench: `agentfleet-dev bench`, throughput and cost per task of a fleet;
//   - budget: caps on what the tasks carrying one label may spend, fleet wide;
//   - checks: the checks a spec lists, and the repair loop when one fails;
//   - client: the Go client of the API; it imports api, this package and the queue and store types they carry (queue.Event, store.TaskState);
//   - dashboard: the web dashboard, one embedded page over the API;
//   - delivery: a task's changes committed, pushed and opened as a pull request;
//   - delivery/forge: pull requests on a forge's REST API behind one interface;
//   - dev: a whole fleet in one process, for `agentfleet-dev dev` and `make demo`;
//   - dispatcher: the service behind the API, its HTTP handlers, event streams and metrics;
//   - dispatcher/webhook: a POST to outside systems when a task ends;
//   - extensions: the operator's bounds on MCP servers, hooks and skills, and starting them;
//   - fleettest: a whole fleet inside a test;
//   - models: how a worker reaches the models behind its profiles;
//   - worker: claiming, running, parking and settling tasks, subagents as child tasks;
//   - worker/internal/eventpump: a session's events on the event subjects, gapless across runs;
//   - worker/internal/spawn: the worker's agent.Spawner, subagents as child tasks;
//   - internal/coalesce: a session's text deltas merged before they are published;
//   - internal/repomemory: a repository's notes kept across tasks;
//   - internal/settings: a spec's session settings, within the policy, mapped onto the session;
//   - internal/storegate: a worker kept going through store outages;
//   - internal/taskops: the lifecycle both sides apply: the completer (every end), the router (every task message), dead letters;
//   - internal/tasksandbox: what confines a local task's commands.
//
// The dispatcher and the worker never import each other.
package fleet
