package tools

import (
	"maps"
	"sort"
	"sync"

	"github.com/agentfleet/agentfleet/llm"
)

// Registry holds the tools offered to a model. Registering a name that exists
// replaces it (latest wins). It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
	order []string // registration order of current names, for stable definitions
}

// NewRegistry returns a registry holding the given tools, in order.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: map[string]Tool{}}
	for _, t := range tools {
		r.Register(t)
	}
	return r
}

// Register adds t, replacing any tool of the same name.
func (r *Registry) Register(t Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[t.Name]; !ok {
		r.order = append(r.order, t.Name)
	}
	r.tools[t.Name] = t
}

// Unregister removes the named tool; it is a no-op when absent.
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; !ok {
		return
	}
	delete(r.tools, name)
	for i, n := range r.order {
		if n == name {
			r.order = append(r.order[:i], r.order[i+1:]...)
			break
		}
	}
}

// Get returns the named tool.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Definitions returns the model-facing definitions in registration order.
func (r *Registry) Definitions() []llm.ToolDefinition {
	r.mu.RLock()
	defer r.mu.RUnlock()
	defs := make([]llm.ToolDefinition, 0, len(r.order))
	for _, n := range r.order {
		defs = append(defs, r.tools[n].Definition())
	}
	return defs
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := append([]string(nil), r.order...)
	sort.Strings(names)
	return names
}

// Clone returns an independent copy, so a profile's registry can be extended
// per session without changing the profile.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	c := &Registry{tools: make(map[string]Tool, len(r.tools)), order: append([]string(nil), r.order...)}
	maps.Copy(c.tools, r.tools)
	return c
}
