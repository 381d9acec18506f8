// Package ratelimit shares a provider's rate limits among every worker of
// a fleet, so that the fleet as a whole stays under them and one 429
// slows every worker using that key, not just the one that got it.
//
// # Keys and limits
//
// A Key is a provider, a credential reference (the name the operator
// gives an API key, never the key) and a model. Limits, from the worker
// configuration (rate_limits), give a key requests, input tokens and
// output tokens per minute and concurrent requests; zero means that
// dimension is not limited, and a limit with nothing set, or a negative
// value, is refused. A rule with model "" covers every model of its
// provider and credential; a rule naming the model wins. A rule with a
// Tenant is that tenant's share of the key ("*": each tenant's own), taken
// on top of the key's rule for the requests of the tenant's tasks (the
// tenant comes from the call's context, WithTenant; see tenant.go).
//
// # Design: token buckets in a JetStream key-value bucket
//
// Each key's state is one entry of the bucket <prefix>_ratelimits: a
// token bucket per dimension (refilled continuously at limit/60 per
// second, holding at most one second of traffic, so the fleet never
// bursts past what a provider's own bucket takes), the leases of the
// requests in flight (each with an expiry, so a crashed worker's leases
// lapse), and a pause (until when no request may start). Every change is a
// compare-and-set on the entry's revision: a worker reads the entry,
// refills the buckets for the time since the last write, takes what it
// needs and writes it back only if nobody wrote in between, else it reads
// again. Nothing is held between requests, so workers may come and go.
//
// Within one process the waiters of a key queue locally, one at a time
// reading the shared state, so the bucket's traffic grows with the number
// of workers, not of sessions.
//
// A request is admitted when a request token and a concurrency slot are
// free and neither token bucket is in debt; otherwise the worker waits
// (polling, at most pollInterval between reads) for as long as the bucket
// says. Input and output tokens are only known once the answer is in:
// they are charged then (Charge), and may drive a bucket into debt, which
// delays the next requests until it has refilled. That is exact over time
// without guessing a request's size in advance.
//
// # Adjusting from the provider
//
// Every response's rate-limit headers are read (Observe):
// anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining}
// and OpenAI's x-ratelimit-{limit,remaining}-{requests,tokens}. A limit the
// provider reports lower than the configured one lowers the shared
// limit; a remaining count lower than the bucket empties the bucket down
// to it. A 429 pauses the key for its retry-after (at least
// MinPause when it gives none) and empties its request bucket, so the
// whole fleet waits, not only the worker that got it.
//
// Each model call costs two to three writes to the entry (take, release
// and, when tokens are limited, charge); a JetStream key-value bucket
// takes thousands a second, far above any provider's request rate.
// Clocks of the workers should agree within a second or so. A worker that
// cannot reach the bucket (NATS away) sends its requests unlimited rather
// than failing them.
//
// Transport applies the limiter to every HTTP attempt of an adapter (its
// own retries included) when the request's context carries a Key
// (WithKey); Lazy holds a limiter opened after the clients were built.
// Client wraps an llm.Client: it marks each call with its key, charges the
// answer's tokens, counts a wait in Metrics and tells Notify, which the
// worker turns into a RATE_LIMITED session event.
package ratelimit
