package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// KeyValue returns the JetStream key-value bucket <Prefix>_<name>,
// creating it (file storage, Config.Replicas, one value per key) when it
// does not exist. The fleet's shared state that is not work or events
// lives in such buckets: budgets (fleet/budget) and rate limits
// (llm/ratelimit). Every process that calls it with the same name shares
// the bucket. Like Open, it retries while a JetStream cluster is still
// forming (a bucket created by several processes at once in a cluster
// under load answered no request within the API timeout).
func (c *Client) KeyValue(ctx context.Context, name, description string) (jetstream.KeyValue, error) {
	var kv jetstream.KeyValue
	err := retryWhileForming(ctx, func(ctx context.Context) error {
		var err error
		kv, err = c.openKeyValue(ctx, name, description)
		return err
	})
	return kv, err
}

// openKeyValue is one attempt of KeyValue.
func (c *Client) openKeyValue(ctx context.Context, name, description string) (jetstream.KeyValue, error) {
	bucket := c.cfg.Prefix + "_" + name
	kv, err := c.js.KeyValue(ctx, bucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("queue: opening bucket %s: %w", bucket, err)
	}
	kv, err = c.js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, Description: description,
		Storage: jetstream.FileStorage, Replicas: c.cfg.Replicas, History: 1})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return c.js.KeyValue(ctx, bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("queue: creating bucket %s: %w", bucket, err)
	}
	return kv, nil
}
