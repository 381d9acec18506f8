package testenv

import (
	"context"
	"fmt"
	"net/http"
)

// AnswersOK GETs url and returns nil when it answers 200 OK, else what
// went wrong: the readiness check of a server a test started (with
// EventuallyErr).
func AnswersOK(url string) error {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s answered %s", url, resp.Status)
	}
	return nil
}
