// Package fleet is the domain that the two sides of the fleet share: the
// task spec a submitter sends (TaskSpec, decoded from the store with
// DecodeSpec, checked with Validate), the result a worker stores
// (TaskResult), the reasons a task ends with, what a parked task waits for
// (WaitingFor), the final SESSION_END event, and the ids that make
// messages idempotent (StartMsgID, InputMsgID) and sessions addressable
// (SessionSubject).
//
// # Tasks and sessions
//
// A task is a store.Task whose Spec is a TaskSpec. It has exactly one
// session, whose id is the task id: its turns, tool outputs and usage are
// stored under that id, its events carry it as session_id and its control
// subject is <prefix>.control.<task-id>, whichever worker runs it.
//
// # One package per audience
//
// The packages below this one each serve one audience, and imports run one
// way (docs/architecture.md draws them):
//
//   - api: the HTTP wire types, shared by the two ends of the API;
//   - client: the Go client of the API, for programs that submit and watch
//     tasks; it imports only api and this package;
//   - dispatcher: the service behind the API, its HTTP handlers, event
//     streams and metrics;
//   - worker: claiming, running, parking and settling tasks, subagents as
//     child tasks, the turn recorder and the event pump;
//   - internal/taskops: the lifecycle rules both sides apply (a dead
//     letter, a subtree cancel, a failure from any state), written once;
//   - dev and bench: a whole fleet in one process, for `agentfleet-dev dev`
//     and `agentfleet-dev bench`;
//   - dashboard and fleettest: the web dashboard, and a fleet for tests.
//
// The dispatcher and the worker never import each other.
package fleet
