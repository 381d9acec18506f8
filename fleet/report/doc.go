// Package report computes backlog reports (GET /v1/reports, `dispatcher
// report`, the dashboard's Reports view) from the root tasks a filter
// selects (store.ReportTasks), and renders them as Markdown and CSV.
//
// Decisions where the issue is silent:
//   - A report counts root tasks: a backlog is what was submitted. A
//     task's cost and tokens are those of its whole tree (its subagents').
//   - Four states: waiting (parked) counts as running, cancelled as failed
//     (its reason "cancelled" shows in the outcome table).
//   - The burn-down has BurnDownPoints instants evenly spread from the
//     first task's creation to now (or to the last end when every task has
//     finished); at each instant a task not yet created is not counted,
//     one finished by then counts in its final state, one started counts
//     as running, else as queued.
//   - Success rate is succeeded over finished tasks, with the 95% Wilson
//     score interval (z = 1.96), which stays inside [0, 1] and is honest
//     for small samples and rates near 0 or 1.
//   - Cost (tokens) per success is the cost (input plus output tokens) of
//     every task, failed ones included, divided by the successes: what a
//     result costs.
//   - Time to result is finished minus created over finished tasks;
//     percentiles use the nearest rank.
//   - Compare: the second filter is the first with the compare labels
//     put over it (label backlog=q3,model=a compare model=b compares
//     model a and b on backlog q3).
package report
