// Package models is how a worker reaches the models behind its profiles:
// the operator's provider configuration (ProviderConfig, keyed by profile,
// with more providers per profile as Choices), the environment variables
// that name a model server (ApplyEnv), and the Pool that builds one client
// per profile and provider choice.
//
// Every client of a Pool sits behind its provider's gate: at most
// Concurrency(provider) calls at once on this worker, and, after a rate
// limit with a retry-after, every call to that provider waits until it
// has passed (one session's 429 slows the whole worker, not just the
// session that got it). Under the gate, each call goes through the
// fleet-wide rate limits (llm/ratelimit, shared by every worker through
// NATS) and, when the provider names one, the fallback model
// (llm/fallback), so a call the fallback redirects waits for the fallback
// model's limit. A rate-limit wait and a fallback are reported to the
// session of the call's context (WithNotifier) as RATE_LIMITED and
// MODEL_FALLBACK events; every call is reported to Observe for metrics.
package models
