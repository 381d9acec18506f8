package llm

import (
	"context"
	"net/http"
)

type extraHeadersKey struct{}

// WithExtraHeaders returns a context whose model requests carry h on top
// of the adapter's own headers (an adapter's header of the same name wins,
// so credentials cannot be replaced this way). Hosts use it for per-task
// headers such as an OpenAI-compatible router's X-Title.
func WithExtraHeaders(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, extraHeadersKey{}, h.Clone())
}

// ExtraHeaders returns the headers WithExtraHeaders put on ctx, or nil.
func ExtraHeaders(ctx context.Context) http.Header {
	h, _ := ctx.Value(extraHeadersKey{}).(http.Header)
	return h
}

// AddExtraHeaders sets on r each header of ExtraHeaders(r.Context()) that r
// does not already have. Adapters that build their own requests call it
// before signing them.
func AddExtraHeaders(r *http.Request) {
	for k, vs := range ExtraHeaders(r.Context()) {
		if _, set := r.Header[k]; !set {
			r.Header[k] = append([]string(nil), vs...)
		}
	}
}
