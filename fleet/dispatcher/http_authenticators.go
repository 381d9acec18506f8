package dispatcher

import (
	"net/http"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
)

// identified asks APIOptions.Authenticators in turn. When one recognises
// the request's credential it serves next with the principal in the
// request's context, or refuses the request with 401 when the credential
// is not valid, and reports true; when none does it reports false and
// the token check follows.
func (a *handlers) identified(w http.ResponseWriter, r *http.Request, next http.Handler) bool {
	for _, au := range a.opts.Authenticators {
		p, ok, err := au.Authenticate(r)
		if err != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentfleet", error="invalid_token"`)
			writeErr(w, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: err.Error()})
			return true
		}
		if ok {
			next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), p)))
			return true
		}
	}
	return false
}
