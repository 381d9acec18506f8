// Package compact is the arithmetic of a session's context window: how big
// a request is (Estimator, RequestChars), how much room the window leaves
// (Config, Budget), and how to bring a conversation back under it (Run).
// It calls no model and writes nothing: the agent's session hands it what
// it knows of each recorded turn (Turn), a Summarizer that calls the model,
// and records the Record it returns as a turn of its own.
//
// # Views
//
// A View is what a request holds besides the system prompt and the tools:
// a preamble carrying the summary of the turns before SummaryThrough,
// then every turn from Start, with the tool results of turns before
// PruneBefore shortened to a stub naming the call. A view is a function of
// the recorded turns and the last Record, so a resumed session rebuilds it
// exactly. A view starts only at a user or assistant turn: a tool call is
// never separated from its results.
//
// # Strategies
//
// Run tries prune, summarize, trim in that order and stops once the
// estimate is under Budget.Target (60 % of the threshold, so compactions
// are many turns apart). A compaction that was requested or that follows a
// context-length error always summarizes. A failing summary is tried
// twice, then trim runs. Every step is kept only if it makes the request
// smaller. A result still over Budget.Hard is a *TooLargeError with the
// sizes.
//
// # Estimates
//
// Estimator starts from CharsPerToken (4 characters a token) and
// calibrates on the input tokens the provider reports: the next request is the last one's
// reported size plus the characters added since at the calibrated ratio.
// SizesInError reads the sizes a provider's context-length message names.
package compact
