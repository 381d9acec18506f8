package worker

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// provider returns the configuration of a profile's provider choice: ""
// or the name of the profile's own provider is Providers[profile]; any
// other name one of its Choices. A name this worker lacks is an error
// listing the names it has (the task then fails with not_allowed: route
// such tasks to a queue whose workers have the provider).
func (c Config) provider(profile, choice string) (ProviderConfig, error) {
	pc := c.Providers[profile]
	own := pc.Provider
	if own == "" {
		own = profile
	}
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
