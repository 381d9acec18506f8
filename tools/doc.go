// Package tools defines agent tools (a JSON-Schema definition plus an
// executor), the Registry that holds them, and the execution pipeline:
// lookup, validate, execute through an execenv.Environment, truncate.
// Failures become error results the model can act on, never Go errors that
// stop the loop.
package tools
