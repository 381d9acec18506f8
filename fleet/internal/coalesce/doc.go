// Package coalesce merges a session's text deltas before they are
// published, so that a model streaming a token at a time costs a NATS
// message and a JetStream write per window rather than per token.
//
// Events wraps a session's event source. A run of ASSISTANT_TEXT_DELTA
// events is merged into one delta event per window (Config.Window, default
// 50 ms) or per Config.MaxBytes of text (default 1 KB), whichever comes
// first. The first delta after a quiet window, and so the first of every
// answer, is passed on at once; any other event first flushes the merged
// text, so the order of events is kept. Deltas are only ever joined, never
// split: the merged text is exactly the concatenation of the deltas, and
// every published delta is a whole number of the model's deltas, so a
// subscriber that joins mid-stream never sees half a delta. Seq numbers are
// the publisher's (the worker's event pump numbers what it publishes), so
// they stay gapless; a merged delta keeps the Seq and Time of its first
// delta inside its data.
package coalesce
