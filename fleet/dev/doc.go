// Package dev runs a whole fleet in one process for `agentfleet-dev dev` and
// `make demo`: an embedded NATS server, a SQLite store, the dispatcher
// with its API and dashboard, and in-process workers (Start). Without a
// provider key the sessions use the simulated model of llm/sim, scripted
// by a SimPlan; the tools are real. RunDemo submits the demo backlog and
// reports how it went.
package dev
