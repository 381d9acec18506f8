package worker

import (
	"fmt"

	"github.com/agentfleet/agentfleet/queue"
)

// KeyLimit is the operator's setting of one concurrency key (a task spec's
// concurrency_key, else its tenant): the most of its tasks that run at once
// across the fleet (0: no maximum) and its weight in the share of free
// slots (0: 1). Every worker serving a queue must have the same settings:
// each worker tops a key's gate of tokens up to its own maximum and retires
// those over it (queue/gate.go).
type KeyLimit struct {
	MaxRunning int `mapstructure:"max_running"`
	Weight     int `mapstructure:"weight"`
}

// pullerKeys turns the configuration's keys into the queue's.
func (c Config) pullerKeys() (map[string]queue.KeyLimit, queue.KeyLimit) {
	keys := make(map[string]queue.KeyLimit, len(c.ConcurrencyKeys))
	for k, l := range c.ConcurrencyKeys {
		keys[k] = queue.KeyLimit(l)
	}
	return keys, queue.KeyLimit(c.ConcurrencyKeyDefault)
}

// checkKeys names what is wrong with the keys' settings.
func (c Config) checkKeys() []error {
	var errs []error
	check := func(what string, l KeyLimit) {
		switch {
		case l.MaxRunning < 0 || l.Weight < 0:
			errs = append(errs, fmt.Errorf("%s: max_running and weight must be >= 0, got %d and %d", what, l.MaxRunning, l.Weight))
		case l.MaxRunning > queue.MaxKeyRunning:
			errs = append(errs, fmt.Errorf("%s: max_running must be at most %d (one token message per running task), got %d; use 0 for no maximum",
				what, queue.MaxKeyRunning, l.MaxRunning))
		}
	}
	for k, l := range c.ConcurrencyKeys {
		if err := queue.CheckConcurrencyKey(k); err != nil {
			errs = append(errs, fmt.Errorf("concurrency_keys.%s: the key must be letters, digits, '-' or '_'", k))
		}
		check("concurrency_keys."+k, l)
	}
	check("concurrency_key_default", c.ConcurrencyKeyDefault)
	return errs
}
