// Package bench is `agentfleet-dev bench`: it starts a fleet in this process
// (an embedded NATS server, the dispatcher, workers in this process or each
// in its own, and a simulated model with a configurable latency), or
// targets a running dispatcher, submits N tasks and reports throughput,
// latencies, event delivery, store writes and peak RSS (Run, Report).
package bench
