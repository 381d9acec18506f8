// Package dev runs a whole fleet in one process for `agentfleet-dev dev` and
// `make demo`: an embedded NATS server, a SQLite store, the dispatcher
// with its API and dashboard, and in-process workers (Start). Without a
// provider key the sessions use the simulated model of llm/sim, scripted
// by a SimPlan; the tools are real. RunDemo submits the demo backlog and
// reports how it went.
//
// The API requires a bearer token: Config.Token, or a random one Start
// generates (Fleet.Token; Fleet.DashboardURL carries it once in the URL
// fragment). Config.NoAuth serves it without one, on loopback only.
//
// The embedded NATS server requires credentials too: Start makes the users
// dispatcher, worker and observer (of the default tenant) with random
// passwords and the permissions of queue.PermissionsFor, connects its
// components as them and writes each user's credentials to
// <DataDir>/nats-auth/<role>.env (mode 0600) for processes outside
// (Fleet.NATSUser). A client without credentials is refused.
package dev
