package anthropic

import "github.com/agentfleet/agentfleet/llm"

// Prompt caching. The Messages API caches the prefix of a request up to
// each block marked with cache_control, at most maxBreakpoints marks per
// request. A session resends its whole conversation every round, so the
// adapter marks (see markCacheBreakpoints):
//
//  1. the last tool definition (the tools come first in the prefix), and
//     any definition whose Cache asks for a mark of its own (per-tool
//     breakpoints; these are sent even with prompt_cache false);
//  2. the last system block;
//  3. the last block of the newest user message (this round's tool
//     results): this round writes the prefix up to here;
//  4. the last block of the user message before it: last round's mark,
//     where this round reads what the last round wrote.
//
// Marks 3 and 4 move forward by one user message each round, so every
// round reads the prefix the round before wrote and writes one that grows
// by one exchange. Marks that do not apply (no tools, no system prompt, a
// first round) are left out. ProviderOptions[anthropic][prompt_cache] =
// false sends no marks.

// maxBreakpoints is the provider's limit of cache_control marks per request.
const maxBreakpoints = 4

// maxTurnBreakpoints is how many of those go on the newest user messages.
const maxTurnBreakpoints = 2

// cacheControl is a block's cache_control: {"type":"ephemeral"} (the
// provider's default five-minute lifetime).
type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// promptCacheOn reports whether the request asks for cache marks (the
// default) or turned them off with prompt_cache: false.
func promptCacheOn(req llm.Request) (bool, error) {
	on, ok, err := req.ProviderOptions.Bool(providerName, "prompt_cache")
	if err != nil {
		return false, err
	}
	return on || !ok, nil
}

// markCacheBreakpoints sets cache_control on the blocks the file comment
// names and returns how many it set (never more than maxBreakpoints).
func markCacheBreakpoints(w *wireRequest) int {
	n := 0
	for _, t := range w.Tools {
		if t.CacheControl != nil { // marked by its definition's Cache
			n++
		}
	}
	if k := len(w.Tools); k > 0 && w.Tools[k-1].CacheControl == nil && n < maxBreakpoints {
		w.Tools[k-1].CacheControl = ephemeral
		n++
	}
	if k := len(w.System); k > 0 && n < maxBreakpoints {
		w.System[k-1].CacheControl = ephemeral
		n++
	}
	turns := 0
	for i := len(w.Messages) - 1; i >= 0 && turns < maxTurnBreakpoints && n < maxBreakpoints; i-- {
		if w.Messages[i].Role == "user" && markLastBlock(w.Messages[i].Content) {
			turns++
			n++
		}
	}
	return n
}

// markLastBlock marks the last block of content that can carry a mark
// (text, image, tool result), searching from the end; it reports whether
// one was marked. The blocks were built for this request, so they are
// changed in place.
func markLastBlock(content []any) bool {
	for j := len(content) - 1; j >= 0; j-- {
		switch b := content[j].(type) {
		case textBlock:
			b.CacheControl = ephemeral
			content[j] = b
		case imageBlock:
			b.CacheControl = ephemeral
			content[j] = b
		case toolResultBlock:
			b.CacheControl = ephemeral
			content[j] = b
		default:
			continue
		}
		return true
	}
	return false
}
