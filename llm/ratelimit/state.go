package ratelimit

import (
	"math"
	"time"
)

// burst is how much traffic a bucket holds: one second's worth, so the
// fleet never sends faster than a provider's own bucket refills.
const burst = time.Second

// leaseTTL bounds a concurrency lease whose worker never released it.
const leaseTTL = 10 * time.Minute

// state is one key's shared entry (JSON in the bucket).
type state struct {
	At     int64            `json:"at"`              // unix ns of the last refill
	Req    float64          `json:"req"`             // request tokens
	In     float64          `json:"in"`              // input tokens (may be < 0: debt)
	Out    float64          `json:"out"`             // output tokens (may be < 0: debt)
	Until  int64            `json:"until,omitempty"` // no request starts before (unix ns)
	Leases map[string]int64 `json:"leases,omitempty"`
	// Limits are the effective limits: the configured ones, lowered by
	// what the provider's headers reported.
	Limits Limits `json:"limits"`
}

func capacity(perMinute float64) float64 { return math.Max(1, perMinute*burst.Seconds()/60) }

// newState is a key's first entry: full buckets.
func newState(l Limits, now time.Time) state {
	return state{At: now.UnixNano(), Req: capacity(l.RequestsPerMinute), In: capacity(l.InputTokensPerMinute),
		Out: capacity(l.OutputTokensPerMinute), Limits: l}
}

// refill adds what the buckets earned since At, up to their capacity, and
// drops expired leases.
func (s *state) refill(now time.Time) {
	dt := float64(now.UnixNano()-s.At) / 1e9
	if dt > 0 {
		add := func(v *float64, perMinute float64) {
			if perMinute > 0 {
				*v = math.Min(capacity(perMinute), *v+dt*perMinute/60)
			}
		}
		add(&s.Req, s.Limits.RequestsPerMinute)
		add(&s.In, s.Limits.InputTokensPerMinute)
		add(&s.Out, s.Limits.OutputTokensPerMinute)
		s.At = now.UnixNano()
	}
	for id, exp := range s.Leases {
		if exp < now.UnixNano() {
			delete(s.Leases, id)
		}
	}
}

// wait is how long until a request may start (0: now) and which limit
// holds it.
func (s *state) wait(now time.Time) (time.Duration, string) {
	l := s.Limits
	var d time.Duration
	why := ""
	more := func(w time.Duration, reason string) {
		if w > d {
			d, why = w, reason
		}
	}
	if s.Until > now.UnixNano() {
		more(time.Duration(s.Until-now.UnixNano()), "the provider asked to retry later")
	}
	if l.RequestsPerMinute > 0 && s.Req < 1 {
		more(perMinuteWait(1-s.Req, l.RequestsPerMinute), "requests per minute")
	}
	if l.InputTokensPerMinute > 0 && s.In < 0 {
		more(perMinuteWait(-s.In, l.InputTokensPerMinute), "input tokens per minute")
	}
	if l.OutputTokensPerMinute > 0 && s.Out < 0 {
		more(perMinuteWait(-s.Out, l.OutputTokensPerMinute), "output tokens per minute")
	}
	if l.ConcurrentRequests > 0 && len(s.Leases) >= l.ConcurrentRequests {
		more(pollInterval, "concurrent requests")
	}
	return d, why
}

func perMinuteWait(tokens, perMinute float64) time.Duration {
	return time.Duration(tokens / (perMinute / 60) * float64(time.Second))
}

// take admits one request under lease id.
func (s *state) take(id string, now time.Time) {
	if s.Limits.RequestsPerMinute > 0 {
		s.Req--
	}
	if s.Limits.ConcurrentRequests > 0 {
		if s.Leases == nil {
			s.Leases = map[string]int64{}
		}
		s.Leases[id] = now.Add(leaseTTL).UnixNano()
	}
}
