// Package budget caps what the tasks carrying one label may spend, fleet
// wide or within one tenant, and what all the tasks of a tenant may spend.
//
// # Model
//
// A budget has a scope: fleet-wide (no tenant: the label's tasks of every
// tenant; the budgets set before tenants existed stay so, and only an
// admin of every tenant reads or sets them), or one tenant's (the label's
// tasks of that tenant only; Label AllTasks, "*": every task of the
// tenant). A task is stopped by any exhausted budget whose scope covers
// it: a fleet-wide one of its labels, its tenant's one of its labels, or
// its tenant's budget of every task.
//
// A Budget names a label ("team=web": tasks whose labels hold team=web,
// children included, as they inherit their parent's labels), a limit in
// USD and what happens when the label's spend reaches it: hold (the
// default) or cancel. Spend is the cost of every session of those tasks,
// as the store sums it (store.Usage), so it covers every worker.
//
// # Where it lives
//
// Budgets live in the JetStream key-value bucket <prefix>_budgets, one key
// per budget: the label base64url-encoded for a fleet-wide one (as before
// tenants), t.<tenant>.<label> (each base64url-encoded) for a tenant's, so every dispatcher and worker
// shares them without a schema change in either store. The dispatcher
// writes them: PUT /v1/budgets/{label} (Book.Put), and Enforcer, which
// every few seconds (budget_check_interval) sums each label's spend and
// writes spent_usd and exhausted when they change (compare-and-set on the
// key's revision, so two dispatchers never undo each other). Workers watch
// the bucket (Book.Watch) and decide locally, without a store read:
//
//   - a running task of an exhausted label finishes its current turn and
//     stops with reason "budget": with hold it goes back to queued, its
//     error "budget" marking it held, its message acknowledged; with
//     cancel it ends cancelled with reason "budget";
//   - a queued task of an exhausted label that a worker claims is held or
//     cancelled the same way before its session starts.
//
// When a budget is raised above its spend (or removed), the enforcer
// republishes every queued task of the label held with error "budget",
// and they resume from their recorded turns; it also looks for held tasks
// of every budget that is not spent once a minute, which catches a hold
// that raced a raise and a release cut short by a crash. When a budget with cancel
// becomes exhausted, the enforcer also cancels the label's queued tasks.
//
// Enforcement lags spend by at most the check interval plus one turn per
// running task: a budget is a brake, not an exact ceiling.
package budget
