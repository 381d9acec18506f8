// Package natsauth turns the fleet's NATS permissions (queue.PermissionsFor)
// into what a NATS server enforces: the permissions of a server-configured
// user (nats-server's Options.Users, as dev mode's embedded server and
// nats.conf use) and those of a decentralized-auth user JWT (operator,
// account and user JWTs, creds files). The table itself lives in one place,
// queue/permissions.go; this package only translates it.
package natsauth

import (
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentfleet/agentfleet/queue"
)

// ResponseTTL is how long a user with AllowResponses may answer a request
// it received: NATS's default for allow_responses (2 minutes), far longer
// than any control request waits.
const ResponseTTL = 2 * time.Minute

// Server returns p as nats-server user permissions.
func Server(p queue.Permissions) *server.Permissions {
	sp := &server.Permissions{Publish: subjectPermission(p.Publish), Subscribe: subjectPermission(p.Subscribe)}
	if p.AllowResponses {
		sp.Response = &server.ResponsePermission{MaxMsgs: 1, Expires: ResponseTTL}
	}
	return sp
}

func subjectPermission(r queue.SubjectRules) *server.SubjectPermission {
	if len(r.Allow) == 0 && len(r.Deny) == 0 {
		return nil
	}
	return &server.SubjectPermission{Allow: clone(r.Allow), Deny: clone(r.Deny)}
}

func clone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return append([]string(nil), s...)
}

// JWT returns p as the permissions of a user JWT (jwt.UserClaims.Permissions).
func JWT(p queue.Permissions) jwt.Permissions {
	jp := jwt.Permissions{
		Pub: jwt.Permission{Allow: clone(p.Publish.Allow), Deny: clone(p.Publish.Deny)},
		Sub: jwt.Permission{Allow: clone(p.Subscribe.Allow), Deny: clone(p.Subscribe.Deny)},
	}
	if p.AllowResponses {
		jp.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: ResponseTTL}
	}
	return jp
}

// RandomPassword returns 32 random bytes, URL-safe: a password for a user
// made at start (dev mode).
func RandomPassword() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}
