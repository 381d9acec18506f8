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
	"fmt"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

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

// Scope returns the scoped signing key of a role for an account JWT
// (jwt.AccountClaims.SigningKeys.AddScopedSigner): every user signed with
// signingKey (an account nkey's public key) gets p and nothing else,
// whatever its own JWT says. Scoped keys keep the permissions in the
// account JWT, which the server resolves, rather than in each user JWT,
// which the client sends in its CONNECT line (where the fleet's long lists
// would exceed the server's 4 KiB max_control_line). It is what `nsc edit
// signing-key --role <role> --allow-pub ... --allow-sub ...` makes
// (docs/operations.md, "Decentralized auth").
func Scope(role, signingKey string, p queue.Permissions) *jwt.UserScope {
	scope := jwt.NewUserScope()
	scope.Key = signingKey
	scope.Role = role
	scope.Template.Permissions = JWT(p)
	scope.Description = "agentfleet " + role
	return scope
}

// UserCreds issues a user JWT for name, signed by signer (a scoped
// signing key of account, see Scope, which gives the user its
// permissions), expiring after expires when > 0. It returns a creds file's
// contents (the JWT and the user's seed), what
// queue.ConnectOptions.CredsFile reads: what `nsc add user <name> -K
// <role>` writes.
func UserCreds(signer nkeys.KeyPair, account, name string, expires time.Duration) ([]byte, error) {
	user, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	pub, err := user.PublicKey()
	if err != nil {
		return nil, err
	}
	claims := jwt.NewUserClaims(pub)
	claims.Name = name
	claims.IssuerAccount = account
	// A scoped signer's users carry no permissions or limits of their own.
	claims.UserPermissionLimits = jwt.UserPermissionLimits{}
	if expires > 0 {
		claims.Expires = time.Now().Add(expires).Unix()
	}
	token, err := claims.Encode(signer)
	if err != nil {
		return nil, fmt.Errorf("natsauth: signing the JWT of user %s: %w", name, err)
	}
	seed, err := user.Seed()
	if err != nil {
		return nil, err
	}
	return jwt.FormatUserConfig(token, seed)
}
