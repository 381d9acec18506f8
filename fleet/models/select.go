package models

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/profiles"
)

// Select returns the configuration of a profile's provider choice from
// providers (keyed by profile): "" or the name of the profile's own
// provider is providers[profile]; any other name one of its Choices. A
// name the worker lacks is an error listing the names it has (the task
// then fails with not_allowed: route such tasks to a queue whose workers
// have the provider).
func Select(providers map[string]ProviderConfig, profile, choice string) (ProviderConfig, error) {
	pc := providers[profile]
	own := pc.name(profile)
	if choice == "" || choice == own {
		return pc, nil
	}
	if cp, ok := pc.Choices[choice]; ok {
		if cp.Provider == "" {
			cp.Provider = choice
		}
		return cp, nil
	}
	names := append([]string{own}, slices.Sorted(maps.Keys(pc.Choices))...)
	return ProviderConfig{}, fmt.Errorf("provider %q is not configured for profile %s on this worker (providers.%s.choices); it has %s",
		choice, profile, profile, strings.Join(names, ", "))
}

// name is the llm/provider name serving profile with this configuration.
func (pc ProviderConfig) name(profile string) string {
	if pc.Provider == "" {
		return profile
	}
	return pc.Provider
}

// ProfileOptions are the profile options of the provider's context
// settings (its context window and summary model).
func (pc ProviderConfig) ProfileOptions() []profiles.Option {
	var opts []profiles.Option
	if pc.ContextWindow > 0 {
		opts = append(opts, profiles.WithContextWindow(pc.ContextWindow))
	}
	if pc.SummaryModel != "" {
		opts = append(opts, profiles.WithSummaryModel(pc.SummaryModel))
	}
	return opts
}
