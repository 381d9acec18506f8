package anthropic_test

import (
	"context"
	"encoding/json"
)

func contextWithCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

func jsonString(s string) (string, error) {
	b, err := json.Marshal(s)
	return string(b), err
}
