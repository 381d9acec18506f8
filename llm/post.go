package llm

import (
	"bytes"
	"context"
	"maps"
	"net/http"
)

// PostJSON returns a request builder for Send: a POST of body to url with
// header, Content-Type application/json, and an Accept header asking for an
// event stream or JSON, plus the context's extra headers
// (WithExtraHeaders). Each call makes a fresh request, as retries need.
func PostJSON(url string, body []byte, header http.Header, stream bool) func(ctx context.Context) (*http.Request, error) {
	return func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		maps.Copy(r.Header, header)
		r.Header.Set("Content-Type", "application/json")
		AddExtraHeaders(r)
		if stream {
			r.Header.Set("Accept", "text/event-stream")
		} else {
			r.Header.Set("Accept", "application/json")
		}
		return r, nil
	}
}
