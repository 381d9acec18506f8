package profiles

import (
	"fmt"
	"maps"

	"github.com/agentfleet/agentfleet/llm"
)

// OfferProviderTools returns a copy of p that offers the provider's own
// tools (llm.ProviderTool: Anthropic's web search, computer use with its
// display size, text editor; OpenAI's web search; Gemini's Google Search,
// code execution and URL context) on every request, and per-tool cache
// breakpoints (a definition with only a Name and Cache marks that
// registered tool). A session gets them by being created from the copy; p
// is unchanged. They travel in ProviderOptions[p.ID()]["tools"] and are
// merged by llm.ToolsFor (a typed definition replaces the registered
// definition of its name).
//
// Each ProviderTool's Provider defaults to the profile's and must be it.
// A server-run tool needs nothing more: its results come back as content.
// A client-run tool (computer use, the text editor, bash) is a call the
// model makes by the definition's Name, so a tool of that name must be
// registered to run it (WithTools): without one the offer is refused,
// since the model would call a tool nothing runs. Bad input gets an error
// that says which definition and what to do.
func (p *Profile) OfferProviderTools(defs ...llm.ToolDefinition) (*Profile, error) {
	own := make([]llm.ToolDefinition, 0, len(defs))
	for i, d := range defs {
		if d.Provider == nil {
			if _, ok := p.registry.Get(d.Name); !ok || !d.Cache {
				return nil, fmt.Errorf("profiles: provider tool %d (%q) has no provider_tool; only a registered tool's name with cache: true may stand alone", i, d.Name)
			}
			own = append(own, d)
			continue
		}
		pt := *d.Provider
		if pt.Provider == "" {
			pt.Provider = p.id
		}
		switch {
		case pt.Provider != p.id:
			return nil, fmt.Errorf("profiles: provider tool %q is a %s tool; the %s profile offers only its own", d.Name, pt.Provider, p.id)
		case pt.Type == "":
			return nil, fmt.Errorf("profiles: provider tool %q has no type: name the provider's tool type (e.g. web_search_20250305)", d.Name)
		case p.id == "anthropic" && d.Name == "":
			return nil, fmt.Errorf("profiles: Anthropic tool of type %s has no name: give the name the model calls it by (web_search, computer, str_replace_based_edit_tool, bash)", pt.Type)
		}
		if !pt.ServerRun() {
			if _, ok := p.registry.Get(d.Name); !ok {
				return nil, fmt.Errorf("profiles: %s tool %q (%s) runs on our side, and no tool of that name is registered to run it: register one (WithTools) or offer a server-run tool", p.id, d.Name, pt.Type)
			}
		}
		d.Provider = &pt
		own = append(own, d)
	}
	q := *p
	q.providerTools = append(append([]llm.ToolDefinition(nil), p.providerTools...), own...)
	return &q, nil
}

// ProviderTools returns the provider tools the profile offers.
func (p *Profile) ProviderTools() []llm.ToolDefinition {
	return append([]llm.ToolDefinition(nil), p.providerTools...)
}

// withProviderTools adds the offered tools to a request's options, on a
// copy of the maps the profile's options built.
func (p *Profile) withProviderTools(opts llm.ProviderOptions) llm.ProviderOptions {
	if len(p.providerTools) == 0 {
		return opts
	}
	out := maps.Clone(opts)
	if out == nil {
		out = llm.ProviderOptions{}
	}
	own := maps.Clone(out[p.id])
	if own == nil {
		own = map[string]any{}
	}
	own["tools"] = p.ProviderTools()
	out[p.id] = own
	return out
}
