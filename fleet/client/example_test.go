package client_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// Submit a task to a fleet and follow its events until it ends. The fleet
// here is dev mode (everything in one process, the simulated model); a
// deployed dispatcher is reached the same way with its URL and token.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "agentfleet-example-")
	if err != nil {
		log.Fatal(err) //nolint:gocritic // an example stops at its first error; the process ends with it
	}
	defer func() { _ = os.RemoveAll(dir) }()
	fl, err := dev.Start(ctx, dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort, DataDir: dir, Simulated: true})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = fl.Close() }()

	c, err := client.New(fl.URL(), fl.Token(), nil) // the dispatcher's URL and bearer token
	if err != nil {
		log.Fatal(err)
	}
	sub, err := c.Submit(ctx, fleet.TaskSpec{Prompt: "Add a README to the repository"})
	if err != nil {
		log.Fatal(err)
	}
	events, err := c.Events(ctx, sub.Task.ID, client.StreamOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer func() { _ = events.Close() }()
	for {
		ev, err := events.Next()
		if err != nil {
			log.Fatal(err)
		}
		if ev.End != nil { // the task ended and every event was sent
			break
		}
	}
	task, err := c.Get(ctx, sub.Task.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.State)
	// Output: succeeded
}
