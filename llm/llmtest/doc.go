// Package llmtest holds test helpers for code that talks to model
// providers: Collect and Deltas read a stream, FastRetry makes the retry
// policy fast and records its sleeps, Exercise runs an adapter through the
// conformance scenarios against the simulated provider, and
// BenchmarkStreamDecode measures a stream decoder on recorded traffic. It
// is for tests only (it imports testing); the simulated provider itself is
// llm/sim.
package llmtest
