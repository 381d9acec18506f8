// Package scripted is a simulated model whose script travels in the
// conversation: a task prompt made by Prompt carries, after its title, the
// steps the model answers at each turn (text, tool calls, a delay, a gate a
// test opens, failures). The turn is the number of assistant messages in
// the request, so any worker, in any order, and a session resumed on
// another worker, gets the same answers: the model keeps no state a
// restart could lose.
//
// It speaks the Anthropic Messages API (rendered by a one-shot sim.Server)
// and counts the requests for each step of each conversation, so a caller
// can tell a model request beyond one per round (Requests, Repeats).
// Fleet tests serve it through fleettest.NewModel; the chaos run serves it
// from its own process (simllm -scripted).
package scripted
