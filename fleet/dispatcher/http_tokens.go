package dispatcher

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// API tokens are managed by admins: an admin creates tokens with grants
// only in tenants where it is admin itself (a grant for every tenant,
// "*", needs an admin of every tenant), so no token holds more than its
// creator; it lists and revokes the tokens whose every grant lies in such
// tenants. The secret is in the answer to the creation and nowhere else.

// maxTokenBody bounds a POST /v1/tokens body.
const maxTokenBody = 16 << 10

func (a *handlers) createToken(w http.ResponseWriter, r *http.Request) {
	var req api.TokenRequest
	if !decodeBody(w, r, maxTokenBody, "body", &req) {
		return
	}
	p := principal(r)
	params, field, reason := tokenParams(req, p, time.Now())
	for t := range req.Grants {
		noteAudit(r, t, "")
	}
	if field != "" {
		if msg, ok := strings.CutPrefix(reason, "forbidden: "); ok {
			writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Field: field, Message: msg})
			return
		}
		badRequestf(w, field, "%s", reason)
		return
	}
	secret, hash := NewToken()
	params.Hash = hash
	tok, err := a.principals.CreateToken(r.Context(), params)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	noteAudit(r, "", tok.ID.String())
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, api.CreatedToken{TokenView: tokenView(tok), Token: secret})
}

// tokenParams checks a token request by p; a bad one returns the field
// and the reason ("forbidden: ..." for a grant p may not give).
func tokenParams(req api.TokenRequest, p identity.Principal, now time.Time) (store.CreateTokenParams, string, string) {
	out := store.CreateTokenParams{Name: strings.TrimSpace(req.Name), Grants: map[string]string{}, CreatedBy: p.ID}
	switch {
	case out.Name == "":
		return out, "name", "is required: say who or what the token is for, e.g. ci-nightly"
	case len(out.Name) > 200:
		return out, "name", "is longer than 200 bytes"
	case len(req.Grants) == 0:
		return out, "grants", `is required: map tenants to roles, e.g. {"team-a": "submitter"} ("*" for every tenant)`
	}
	var named []string
	for tenant, role := range req.Grants {
		if tenant != identity.AllTenants {
			if queue.CheckQueueName(tenant) != nil {
				return out, "grants", "tenant " + strconv.Quote(tenant) + " may hold only letters, digits, '-' and '_' (a tenant's name, as a spec's tenant field), or be \"*\" for every tenant"
			}
			named = append(named, tenant)
		}
		rl, err := identity.ParseRole(role)
		if err != nil {
			return out, "grants." + tenant, err.Error()
		}
		if !p.Can(tenant, identity.Admin) {
			return out, "grants." + tenant, "forbidden: only an admin of tenant " + tenant + " may grant a role there; " + p.ID + " is not"
		}
		out.Grants[tenant] = string(rl)
	}
	slices.Sort(named)
	out.DefaultTenant = req.DefaultTenant
	switch {
	case out.DefaultTenant == "" && len(named) == 1:
		out.DefaultTenant = named[0]
	case out.DefaultTenant == "" && len(named) == 0:
		out.DefaultTenant = fleet.DefaultTenant
	case out.DefaultTenant == "":
		return out, "default_tenant", "is required with grants in several tenants: name one of " + strings.Join(named, ", ")
	case out.Grants[out.DefaultTenant] == "" && out.Grants[identity.AllTenants] == "":
		return out, "default_tenant", out.DefaultTenant + " is not a tenant of the grants"
	}
	switch {
	case !req.ExpiresAt.IsZero() && req.ExpiresIn != "":
		return out, "expires_in", "and expires_at are both set: give one"
	case !req.ExpiresAt.IsZero():
		out.ExpiresAt = req.ExpiresAt
	case req.ExpiresIn != "":
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			return out, "expires_in", "must be a positive duration such as 720h, got " + req.ExpiresIn
		}
		out.ExpiresAt = now.Add(d)
	default:
		out.ExpiresAt = now.Add(api.DefaultTokenLifetime)
	}
	if !out.ExpiresAt.After(now) {
		return out, "expires_at", "is in the past"
	}
	return out, "", ""
}

func tokenView(t store.Token) api.TokenView {
	return api.TokenView{ID: t.ID.String(), Principal: "token:" + t.ID.String(), Name: t.Name, Grants: t.Grants,
		DefaultTenant: t.DefaultTenant, ExpiresAt: t.ExpiresAt, CreatedBy: t.CreatedBy, CreatedAt: t.CreatedAt, RevokedAt: t.RevokedAt}
}

// manages reports whether p may see and revoke tok: it is admin in every
// tenant tok has a grant in.
func manages(p identity.Principal, tok store.Token) bool {
	for tenant := range tok.Grants {
		if !p.Can(tenant, identity.Admin) {
			return false
		}
	}
	return true
}

// listTokens serves GET /v1/tokens (?revoked=true lists revoked ones too).
func (a *handlers) listTokens(w http.ResponseWriter, r *http.Request) {
	all, err := a.principals.ListTokens(r.Context(), store.ListTokensParams{IncludeRevoked: r.URL.Query().Get("revoked") == "true"})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	p := principal(r)
	out := api.TokenList{Tokens: []api.TokenView{}}
	for _, t := range all {
		if manages(p, t) {
			out.Tokens = append(out.Tokens, tokenView(t))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// revokeToken serves DELETE /v1/tokens/{id}: the token is refused from
// the next request on. A token the principal does not manage is a 404.
func (a *handlers) revokeToken(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		badRequestf(w, "id", "%q is not a token id (a UUID; dispatcher token list shows them)", r.PathValue("id"))
		return
	}
	noteAudit(r, "", id.String())
	all, err := a.principals.ListTokens(r.Context(), store.ListTokensParams{IncludeRevoked: true})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	i := slices.IndexFunc(all, func(t store.Token) bool { return t.ID == id })
	if i < 0 || !manages(principal(r), all[i]) {
		a.fail(w, r, store.NotFoundf("RevokeToken", "no token %s", id))
		return
	}
	for t := range all[i].Grants {
		noteAudit(r, t, "")
	}
	tok, err := a.principals.RevokeToken(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tokenView(tok))
}
