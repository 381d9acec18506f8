package dispatcher

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
)

// Stream tickets let a browser's EventSource (which cannot set headers)
// authenticate an event stream without the bearer token in its URL:
// POST /v1/stream-tickets, with the token, answers a ticket valid for
// DefaultTicketTTL that one GET of an event stream redeems with ?ticket=.
//
// A ticket is signed, not stored: expiry, a random nonce and an HMAC of
// both under a key derived from the API token, so every replica of the
// dispatcher behind one Service accepts the tickets of the others. Each
// process remembers the nonces it has redeemed until they expire, so a
// ticket is single-use per dispatcher process; with N replicas a stolen
// ticket could be replayed at most once on each of the others within its
// lifetime. A ticket says nothing about which stream it opens: any of the
// three event streams its principal may read. It carries the principal
// that asked for it (signed with the rest), so the stream is scoped to
// that principal's tenants; a token revoked after the ticket was issued
// still opens one stream within the ticket's lifetime, and a stream that
// is open stays open (both bounded: a minute, and the stream's life).
// Without a bootstrap token the key is random per process, so a ticket
// opens a stream only on the dispatcher that issued it.

// DefaultTicketTTL is how long a stream ticket is valid.
const DefaultTicketTTL = 60 * time.Second

const (
	ticketNonce = 16
	ticketMAC   = 16
	ticketHead  = 8 + ticketNonce + ticketMAC // then the principal as JSON
	// maxTicket bounds a ticket's length (a principal of many grants).
	maxTicket = 8 << 10
)

// tickets issues and redeems stream tickets.
type tickets struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	used map[[ticketNonce]byte]time.Time // redeemed nonce -> its expiry
}

// newTickets signs with a key derived from token, or a random one without
// a token (the tickets of an open API open nothing it does not).
func newTickets(token string, ttl time.Duration) *tickets {
	var key []byte
	if token != "" {
		m := hmac.New(sha256.New, []byte(token))
		m.Write([]byte("agentfleet stream ticket v1"))
		key = m.Sum(nil)
	} else {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	if ttl <= 0 {
		ttl = DefaultTicketTTL
	}
	return &tickets{key: key, ttl: ttl, now: time.Now, used: map[[ticketNonce]byte]time.Time{}}
}

func (t *tickets) mac(b []byte) []byte {
	m := hmac.New(sha256.New, t.key)
	m.Write(b)
	return m.Sum(nil)[:ticketMAC]
}

// issue returns a new ticket for p and when it expires.
func (t *tickets) issue(p identity.Principal) (string, time.Time) {
	exp := t.now().Add(t.ttl).Truncate(time.Second)
	who, _ := json.Marshal(p) // strings and maps of strings always marshal
	b := make([]byte, 8+ticketNonce, ticketHead+len(who))
	binary.BigEndian.PutUint64(b, uint64(exp.Unix()))
	_, _ = rand.Read(b[8:])
	b = append(b, t.mac(append(slices.Clip(b), who...))...)
	b = append(b, who...)
	return base64.RawURLEncoding.EncodeToString(b), exp
}

// redeem returns the principal of s when s is a ticket this key signed,
// not expired and not redeemed before; it is spent either way.
func (t *tickets) redeem(s string) (identity.Principal, bool) {
	if len(s) > maxTicket {
		return identity.Principal{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < ticketHead {
		return identity.Principal{}, false
	}
	head, mac, who := b[:8+ticketNonce], b[8+ticketNonce:ticketHead], b[ticketHead:]
	if !hmac.Equal(mac, t.mac(append(slices.Clip(head), who...))) {
		return identity.Principal{}, false
	}
	var p identity.Principal
	if json.Unmarshal(who, &p) != nil {
		return identity.Principal{}, false
	}
	exp := time.Unix(int64(binary.BigEndian.Uint64(b)), 0)
	now := t.now()
	if !now.Before(exp) {
		return identity.Principal{}, false
	}
	var nonce [ticketNonce]byte
	copy(nonce[:], b[8:])
	t.mu.Lock()
	defer t.mu.Unlock()
	for n, e := range t.used {
		if !now.Before(e) {
			delete(t.used, n)
		}
	}
	if _, spent := t.used[nonce]; spent {
		return identity.Principal{}, false
	}
	t.used[nonce] = exp
	return p, true
}

// streamTicket serves POST /v1/stream-tickets.
func (a *handlers) streamTicket(w http.ResponseWriter, r *http.Request) {
	tk, exp := a.tickets.issue(principal(r))
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, api.StreamTicket{Ticket: tk, ExpiresAt: exp})
}
