package queue

import (
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A stream the server describes with its own defaults filled in is up to
// date with a wanted configuration that leaves them out; a difference in
// any field the configuration sets is not.
func TestUpToDateComparesTheFieldsSet(t *testing.T) {
	want := jetstream.StreamConfig{Name: "TASKS", Subjects: []string{"a.>"}, Replicas: 3, Duplicates: 2 * time.Minute}
	have := want
	have.MaxMsgs, have.MaxBytes, have.MaxConsumers = -1, -1, -1
	if !upToDate(have, want) {
		t.Fatal("server defaults made an identical stream look changed")
	}
	for name, change := range map[string]func(*jetstream.StreamConfig){
		"replicas":   func(c *jetstream.StreamConfig) { c.Replicas = 1 },
		"subjects":   func(c *jetstream.StreamConfig) { c.Subjects = []string{"b.>"} },
		"duplicates": func(c *jetstream.StreamConfig) { c.Duplicates = time.Minute },
	} {
		changed := have
		change(&changed)
		if upToDate(changed, want) {
			t.Errorf("a stream with other %s is up to date", name)
		}
	}
}
