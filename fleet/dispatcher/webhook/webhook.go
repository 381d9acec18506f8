package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/outbound"
	"github.com/agentfleet/agentfleet/queue"
)

// Headers of a delivery.
const (
	HeaderSignature = "X-Agentfleet-Signature"
	HeaderDelivery  = "X-Agentfleet-Delivery"
	HeaderEvent     = "X-Agentfleet-Event"
	// EventTaskEnded is the value of HeaderEvent.
	EventTaskEnded = "task.ended"
)

// Config configures webhooks. The zero value of each field but URLs and
// Secret means the default named next to it.
type Config struct {
	URLs []string // every tenant's task ends
	// TenantURLs receive the task ends of one tenant each
	// (webhook_tenant_urls.<tenant>), beside URLs: a team's receiver
	// hears only its own tasks.
	TenantURLs  map[string][]string
	Secret      string        // HMAC key; required with URLs
	MaxAttempts int           // default 6
	Backoff     time.Duration // first retry delay, default 1 s, doubled per attempt
	MaxBackoff  time.Duration // default 1 min
	Timeout     time.Duration // per attempt, default 10 s
	Concurrency int           // attempts in flight, default 8
	LogSize     int           // deliveries kept for the API, default 1000
	// AllowPrivate are the internal addresses receivers may be at (the
	// dispatcher's outbound_allow_private); deliveries go through the
	// outbound guard (internal/outbound), which refuses every other
	// loopback, private, link-local, CGNAT or NAT64 address.
	AllowPrivate []netip.Prefix
}

// WithDefaults returns c with its zero fields set.
func (c Config) WithDefaults() Config {
	set := func(f *time.Duration, d time.Duration) {
		if *f == 0 {
			*f = d
		}
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 6
	}
	set(&c.Backoff, time.Second)
	set(&c.MaxBackoff, time.Minute)
	set(&c.Timeout, 10*time.Second)
	if c.Concurrency == 0 {
		c.Concurrency = 8
	}
	if c.LogSize == 0 {
		c.LogSize = 1000
	}
	return c
}

// Validate names the wrong fields with their configuration keys.
func (c Config) Validate() error {
	var errs []error
	if c.Enabled() && c.Secret == "" {
		errs = append(errs, errors.New("webhook_secret is required with webhook_urls or webhook_tenant_urls: receivers check the signature with it"))
	}
	errs = append(errs, checkURLs("webhook_urls", c.URLs)...)
	for tenant, urls := range c.TenantURLs {
		errs = append(errs, checkURLs("webhook_tenant_urls."+tenant, urls)...)
	}
	if c.MaxAttempts < 1 || c.Backoff < 0 || c.MaxBackoff < c.Backoff || c.Timeout < 0 || c.Concurrency < 1 || c.LogSize < 1 {
		errs = append(errs, errors.New("webhook: max_attempts, concurrency and log_size must be >= 1, and 0 <= backoff <= max_backoff"))
	}
	return errors.Join(errs...)
}

// Enabled reports whether any receiver is configured.
func (c Config) Enabled() bool {
	for _, urls := range c.TenantURLs {
		if len(urls) > 0 {
			return true
		}
	}
	return len(c.URLs) > 0
}

// receivers are the URLs of a task end of tenant.
func (c Config) receivers(tenant string) []string {
	if tenant == "" {
		tenant = fleet.DefaultTenant
	}
	return append(slices.Clip(c.URLs), c.TenantURLs[tenant]...)
}

// checkURLs names each receiver of key that is not an http(s) URL
// without user info.
func checkURLs(key string, urls []string) []error {
	var errs []error
	for i, u := range urls {
		p, err := url.Parse(u)
		switch {
		case err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "":
			errs = append(errs, fmt.Errorf("%s[%d] must be an http or https URL, got %q", key, i, u))
		case p.User != nil:
			errs = append(errs, fmt.Errorf("%s[%d] must not hold user info (user@host); receivers check the signature instead", key, i))
		}
	}
	return errs
}

// Payload is the body of a delivery.
type Payload struct {
	Event      string               `json:"event"` // EventTaskEnded
	ID         string               `json:"id"`    // the SESSION_END envelope's id
	TaskID     string               `json:"task_id"`
	RootTaskID string               `json:"root_task_id"`
	Time       time.Time            `json:"time"`
	End        fleet.SessionEndData `json:"end"`
}

// Sign is the value of HeaderSignature for body.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is body's under secret.
func Verify(secret string, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// Delivery is one payload to one URL, as the log shows it.
type Delivery struct {
	ID         string    `json:"id"` // the payload's id
	TaskID     string    `json:"task_id"`
	URL        string    `json:"url"`
	State      string    `json:"state"` // pending, delivered, failed
	Attempts   int       `json:"attempts"`
	StatusCode int       `json:"status_code,omitempty"` // of the last attempt
	Error      string    `json:"error,omitempty"`       // of the last attempt
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Delivery states.
const (
	StatePending   = "pending"
	StateDelivered = "delivered"
	StateFailed    = "failed"
)

// Notifier posts task ends. Run follows the events; Deliveries reads the
// log. It is safe for concurrent use.
type Notifier struct {
	cfg  Config
	q    *queue.Client
	log  *slog.Logger
	http *http.Client
	sem  chan struct{}

	following     chan struct{} // closed once Run follows the events
	followingOnce sync.Once

	mu   sync.Mutex
	ring []*Delivery // the last LogSize deliveries, oldest first
}

// Following is closed once Run follows the events: task ends after that
// are delivered.
func (n *Notifier) Following() <-chan struct{} { return n.following }

// New returns a Notifier; cfg must have URLs.
func New(cfg Config, q *queue.Client, log *slog.Logger) (*Notifier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Notifier{cfg: cfg, q: q, log: log, http: outbound.Client(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: cfg.AllowPrivate, Timeout: cfg.Timeout}), sem: make(chan struct{}, cfg.Concurrency),
		following: make(chan struct{})}, nil
}

// Run follows SESSION_END envelopes published from now on and delivers
// each until ctx ends; it waits for the deliveries in flight, which stop
// retrying when ctx ends.
func (n *Notifier) Run(ctx context.Context) error {
	sub, err := n.q.SubscribeEvents(ctx, queue.EventFilter{Kind: fleet.KindSessionEnd}, queue.NewOnly())
	if err != nil {
		return fmt.Errorf("webhook: follow task ends: %w", err)
	}
	defer sub.Stop()
	n.followingOnce.Do(func() { close(n.following) })
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("webhook: follow task ends: %w", err)
		}
		body, err := payload(ev.Event)
		if err != nil {
			n.log.Warn("webhook: skipping an end that does not decode", "event_id", ev.ID, "err", err)
			continue
		}
		for _, u := range n.cfg.receivers(ev.Tenant) {
			d := n.record(ev.ID, ev.TaskID, u)
			wg.Go(func() { n.deliver(ctx, d, body) })
		}
	}
}

// payload builds the body for a SESSION_END envelope.
func payload(ev queue.Event) ([]byte, error) {
	var end fleet.SessionEndData
	if err := json.Unmarshal(ev.Data, &end); err != nil {
		return nil, err
	}
	return json.Marshal(Payload{Event: EventTaskEnded, ID: ev.ID, TaskID: ev.TaskID, RootTaskID: ev.RootTaskID, Time: ev.Time, End: end})
}

// deliver makes the attempts of one delivery.
func (n *Notifier) deliver(ctx context.Context, d *Delivery, body []byte) {
	wait := n.cfg.Backoff
	for attempt := 1; ; attempt++ {
		code, err := n.attempt(ctx, d, body)
		n.update(d, attempt, code, err)
		if err == nil || attempt >= n.cfg.MaxAttempts {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, n.cfg.MaxBackoff)
	}
}

// attempt POSTs once; a non-2xx answer is an error.
func (n *Notifier) attempt(ctx context.Context, d *Delivery, body []byte) (int, error) {
	select {
	case n.sem <- struct{}{}:
		defer func() { <-n.sem }()
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderSignature, Sign(n.cfg.Secret, body))
	req.Header.Set(HeaderDelivery, d.ID)
	req.Header.Set(HeaderEvent, EventTaskEnded)
	resp, err := n.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, fmt.Errorf("answered %s", resp.Status)
	}
	return resp.StatusCode, nil
}

// record adds a pending delivery to the log.
func (n *Notifier) record(id, task, u string) *Delivery {
	now := time.Now()
	d := &Delivery{ID: id, TaskID: task, URL: u, State: StatePending, CreatedAt: now, UpdatedAt: now}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ring = append(n.ring, d)
	if len(n.ring) > n.cfg.LogSize {
		n.ring = n.ring[len(n.ring)-n.cfg.LogSize:]
	}
	return d
}

// update writes an attempt's outcome.
func (n *Notifier) update(d *Delivery, attempt, code int, err error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	d.Attempts, d.StatusCode, d.UpdatedAt, d.Error = attempt, code, time.Now(), ""
	switch {
	case err == nil:
		d.State = StateDelivered
	case attempt >= n.cfg.MaxAttempts:
		d.State, d.Error = StateFailed, err.Error()
	default:
		d.Error = err.Error()
	}
	if d.State == StateFailed {
		n.log.Warn("webhook delivery failed", "url", d.URL, "task_id", d.TaskID, "attempts", attempt, "err", err)
	}
}

// Deliveries returns the logged deliveries, newest first, of one task
// when taskID is not "", at most limit (0: all kept).
func (n *Notifier) Deliveries(taskID string, limit int) []Delivery {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []Delivery
	for _, d := range slices.Backward(n.ring) {
		if taskID == "" || d.TaskID == taskID {
			out = append(out, *d)
			if limit > 0 && len(out) == limit {
				break
			}
		}
	}
	return out
}
