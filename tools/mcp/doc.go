// Package mcp connects a session to MCP (Model Context Protocol) servers
// with the official Go SDK and offers their tools to the model as ordinary
// tools.Tool values, so MCP calls go through the same pipeline as the
// built-in tools: schema validation, truncation, events and recorded turns.
//
// # Servers
//
// A ServerConfig is a stdio command (Command, Args, Env) or an HTTP
// endpoint (URL, Headers). A stdio server is started through
// the session's execution environment (execenv.ProcessStarter), so it runs
// in the task's workspace under the same environment policy and
// confinement as the task's shell commands (in an SSH environment, on the
// remote host); an environment that cannot start long-lived processes
// makes its start fail with ErrNoProcesses. Values of Env and Headers may hold secret references,
// "${secret:NAME}", resolved on the worker (Secrets); specs never hold the
// secrets themselves.
//
// An HTTP server's requests go through the outbound guard
// (internal/outbound): its address must be public unless the operator
// names it (Options.AllowPrivate), a redirect may lead only to the
// server's own origin or a URL on Options.HTTPAllow, and Headers are sent
// to the server's origin only: to the first request of each exchange and
// to redirect hops that stay there, never to another origin.
//
// An HTTP server speaks streamable HTTP or the older HTTP+SSE transport
// (MCP 2024-11-05). By default (Transport "auto") the client sends the
// initialize POST of streamable HTTP; when the server answers it 400, 404
// or 405, as a server of the older transport does, the client opens an
// event stream with a GET of the same URL, waits for its "endpoint" event
// and POSTs its messages to that endpoint, reading answers from the
// stream. The endpoint is resolved against the server's URL and must be
// on its origin (scheme, host and port): an endpoint on another origin is
// refused, even one on HTTPAllow, as the server's messages and headers
// belong to its origin. A server that fell back once is reached over
// HTTP+SSE on reconnects too. Any other failure of the POST is reported
// as it is, without trying SSE; when both fail the error names both.
// Transport "streamable-http" or "sse" pins one, without a probe. The
// SSE stream lives until the connection closes (not bounded by
// StartTimeout); its GET and every POST go through the same guarded
// client as above.
//
// Start starts every server concurrently, each within StartTimeout
// (initialize handshake and tools/list). It returns the servers that failed
// as StartErrors, whose text says what happened: the process could not be
// run (bash's message, from the tail of its standard error), it closed its
// output or wrote something that is not JSON-RPC, or it did not answer in
// time. The caller decides what a failure means; the fleet worker emits a
// WARNING event and runs the session without that server's tools, or fails
// the task when the server is Required.
//
// # Tools
//
// Each listed tool is offered as mcp__<server>__<tool> (characters
// providers refuse become '_', cut to 64) with the server's own input
// schema and description. A tool whose annotations say it only reads
// (readOnlyHint) may run alongside other reading calls; every other MCP
// tool counts as mutating. Register keeps a registry current: a
// notifications/tools/list_changed from a server re-lists its tools and
// adds and removes them in the registry, so the next model request sees the
// new list. When a server declares resources, two more tools list
// (mcp_list_resources) and read (mcp_read_resource) them.
//
// A result's text blocks are joined in order; images are attached to the
// result; embedded resources are inlined; the result's isError flag makes
// an error result. Each call is bounded by CallTimeout (the server is sent
// a cancellation) and what the model sees by MaxOutputChars.
//
// # Failures during a session
//
// A server that dies during a call (its process exits, its HTTP session
// ends) gives that call an error result saying it will be started again;
// the next call to any of its tools starts it anew. A JSON-RPC error from a
// live server is an error result and keeps the connection.
//
// # Concurrency
//
// A Client is safe for concurrent use; calls to one server share one
// connection. Close ends every server and waits for list refreshes in
// flight.
package mcp
