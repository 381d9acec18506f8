// Package webhook tells outside systems that tasks ended: for every
// task's final SESSION_END envelope, the dispatcher POSTs a JSON body
// (Payload) to each configured URL, signed with HMAC-SHA256 over the body,
// and retries with exponential backoff. The deliveries are kept in a log
// the API serves (GET /v1/webhooks/deliveries).
//
// # Signature
//
// The header X-Agentfleet-Signature is "sha256=" followed by the hex
// HMAC-SHA256 of the exact body bytes under the configured secret
// (Sign). A receiver computes the same over the body it read and compares
// in constant time (Verify). X-Agentfleet-Delivery carries the event id,
// the same on every attempt and from every dispatcher, so a receiver can
// drop repeats.
//
// # Delivery
//
// An attempt succeeds on a 2xx answer within Timeout. Anything else is
// retried after Backoff, doubled per attempt up to MaxBackoff, until
// MaxAttempts; the delivery is then marked failed. At most Concurrency
// attempts run at once.
//
// Attempts go through the outbound guard (internal/outbound): a receiver
// at a loopback, private, link-local, CGNAT or NAT64 address is refused
// after resolution unless Config.AllowPrivate (the dispatcher's
// outbound_allow_private) names it, a redirect to another origin carries
// no Authorization or Cookie, and a URL with user info is refused.
//
// Deliveries are at least once while a dispatcher runs: the notifier
// follows SESSION_END envelopes published after it started, so a task that
// ended while no dispatcher ran is not posted, and each running dispatcher
// posts every end (receivers deduplicate by X-Agentfleet-Delivery). The log
// lives in the dispatcher's memory (the last LogSize deliveries) and is
// empty after a restart.
package webhook
