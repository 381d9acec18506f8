package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
)

// sendBatches submits the backlog in batches of size, up to parallel
// requests at a time, and returns the task ids in the backlog's order. A
// batch refused by the dispatcher names its backlog line; the first failure
// stops the batches not yet sent, and the error says how many tasks the
// other batches submitted (each batch is all or nothing).
func sendBatches(ctx context.Context, cl *client.Client, lines []backlogLine, size, parallel int, prog *progress) ([]uuid.UUID, error) {
	ids := make([]uuid.UUID, len(lines))
	var mu sync.Mutex
	sent := 0
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for start := 0; start < len(lines) && gctx.Err() == nil; start += size {
		chunk := lines[start:min(start+size, len(lines))]
		g.Go(func() error {
			res, err := cl.SubmitBatch(gctx, chunkSpecs(chunk))
			if err != nil {
				return batchFailure(chunk, err)
			}
			mu.Lock()
			defer mu.Unlock()
			for i, t := range res.Tasks {
				ids[start+i] = t.ID
			}
			sent += len(res.Tasks)
			prog.submitted = sent
			prog.draw(false)
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, failf("%v (%d task(s) of other batches were submitted)", err, sent)
	}
	return ids, nil
}

func chunkSpecs(chunk []backlogLine) []fleet.TaskSpec {
	specs := make([]fleet.TaskSpec, len(chunk))
	for i, l := range chunk {
		specs[i] = l.spec
	}
	return specs
}

// batchFailure names the backlog line of a task the dispatcher refused.
func batchFailure(chunk []backlogLine, err error) error {
	var ae *client.APIError
	if errors.As(err, &ae) && ae.Index != nil && *ae.Index < len(chunk) {
		return fmt.Errorf("line %d: %s", chunk[*ae.Index].line, ae.Message)
	}
	return fmt.Errorf("submit: %w", err)
}
