// Package client is the Go client of the dispatcher's HTTP API
// (docs/api.md): submit tasks one at a time or in batches, read, list and
// cancel them, steer their running sessions, read their turns, tool
// outputs and artifacts, and follow their events as Server-Sent Events
// (Events, AllEvents). It imports the wire types (package api), the
// domain (package fleet) and two types those carry (queue.Event,
// store.TaskState), so a program that only submits and watches tasks does
// not link the dispatcher, the worker or the agent.
//
// A Client is safe for concurrent use. Errors of the API are *APIError
// values carrying the status, the error code and, for a 400, the field
// that is wrong.
package client
