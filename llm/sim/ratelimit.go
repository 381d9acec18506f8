package sim

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

// RateLimit makes the server enforce a requests-per-minute limit as a
// provider does: a token bucket refilled at RPM/60 a second that holds
// Burst of traffic (six seconds by default). A request beyond it is answered with the dialect's
// 429 and a retry-after (seconds, rounded up) until the next token;
// admitted Anthropic requests carry anthropic-ratelimit-requests-limit and
// -remaining headers. Stats counts both.
type RateLimit struct {
	RPM   float64
	Burst time.Duration

	mu       sync.Mutex
	tokens   float64
	at       time.Time
	admitted int64
	limited  int64
	first    time.Time
	last     time.Time
}

// RateStats is what the enforced limit saw.
type RateStats struct {
	Admitted int64     // requests answered normally
	Limited  int64     // requests answered 429
	First    time.Time // first admitted request
	Last     time.Time // last admitted request
}

// DefaultRateBurst is RateLimit.Burst when EnforceRateLimit is given 0.
const DefaultRateBurst = 6 * time.Second

// EnforceRateLimit turns the limit on for every later request and returns
// it (rpm must be > 0; burst 0 means DefaultRateBurst).
func (s *Server) EnforceRateLimit(rpm float64, burst time.Duration) *RateLimit {
	rl := NewRateLimit(rpm, burst)
	s.UseRateLimit(rl)
	return rl
}

// NewRateLimit returns a limit (burst 0 means DefaultRateBurst) that
// servers share through UseRateLimit.
func NewRateLimit(rpm float64, burst time.Duration) *RateLimit {
	if burst <= 0 {
		burst = DefaultRateBurst
	}
	rl := &RateLimit{RPM: rpm, Burst: burst, at: time.Now()}
	rl.tokens = rl.capacity()
	return rl
}

// UseRateLimit makes the server enforce rl, which other servers may share
// (a handler that answers each request with a server of its own).
func (s *Server) UseRateLimit(rl *RateLimit) {
	s.mu.Lock()
	s.rate = rl
	s.mu.Unlock()
}

func (rl *RateLimit) capacity() float64 { return math.Max(1, rl.RPM*rl.Burst.Seconds()/60) }

// Stats returns the counts so far.
func (rl *RateLimit) Stats() RateStats {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return RateStats{Admitted: rl.admitted, Limited: rl.limited, First: rl.first, Last: rl.last}
}

// admit takes a token, or says how long until one is free.
func (rl *RateLimit) admit(now time.Time) (bool, float64, time.Duration) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rate := rl.RPM / 60
	rl.tokens = math.Min(rl.capacity(), rl.tokens+now.Sub(rl.at).Seconds()*rate)
	rl.at = now
	if rl.tokens >= 1 {
		rl.tokens--
		rl.admitted++
		if rl.first.IsZero() {
			rl.first = now
		}
		rl.last = now
		return true, rl.tokens, 0
	}
	rl.limited++
	return false, 0, time.Duration((1 - rl.tokens) / rate * float64(time.Second))
}

// enforce answers a request over the limit with a 429 and reports true;
// an admitted one gets the rate-limit headers.
func (s *Server) enforce(w http.ResponseWriter, r *http.Request, d Dialect) bool {
	s.mu.Lock()
	rl := s.rate
	s.mu.Unlock()
	if rl == nil {
		return false
	}
	ok, remaining, wait := rl.admit(time.Now())
	if ok {
		if d.Name() == "anthropic" {
			w.Header().Set("anthropic-ratelimit-requests-limit", strconv.Itoa(int(rl.RPM)))
			w.Header().Set("anthropic-ratelimit-requests-remaining", strconv.Itoa(int(remaining)))
		}
		return false
	}
	secs := int(math.Ceil(wait.Seconds()))
	s.writeFailure(w, r, d, Failure{Kind: llm.ErrRateLimited, RetryAfter: strconv.Itoa(max(secs, 1)),
		Message: fmt.Sprintf("sim: over %g requests per minute", rl.RPM)})
	return true
}
