package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"sync"
)

// PromptCache simulates the providers' prompt caches, so a test or a
// benchmark can assert hit rates through the real adapters. With it on
// (Server.EnablePromptCache), the server counts a request's input tokens
// itself and reports them as each provider does, replacing the input and
// cache fields of the scripted Reply.Usage (its output counts stay):
//
//   - anthropic: explicit caching. A prefix is written at each block marked
//     with cache_control and read when a later request's mark, or one of
//     the 20 blocks before it, ends the same prefix. Reported as
//     input_tokens (neither read nor written), cache_read_input_tokens and
//     cache_creation_input_tokens.
//   - openai, chatcompat, gemini: implicit caching. Every prefix of a
//     request is remembered (keyed by model and, for OpenAI, the
//     prompt_cache_key); a later request reads the longest one it repeats.
//     Reported as cached_tokens inside the input or prompt count
//     (prompt_tokens_details, input_tokens_details) or as Gemini's
//     cachedContentTokenCount.
//
// The prefix is cut at block boundaries: each tool definition, system
// block, and content block or input item is one block, counted as a token
// per four bytes of its JSON. A prefix shorter than MinTokens is never
// cached (the providers' floor is about 1024 tokens).
type PromptCache struct {
	MinTokens int

	mu   sync.Mutex
	seen map[[32]byte]struct{}
}

// maxCachedPrefixes bounds what a long benchmark remembers; past it the
// cache starts empty again, as an evicting provider would.
const maxCachedPrefixes = 1 << 18

// anthropicLookback is how many blocks before a mark the provider checks
// for an earlier cached prefix.
const anthropicLookback = 20

// EnablePromptCache turns the simulated prompt cache on for every later
// request, with prefixes of at least minTokens cached, and returns it.
func (s *Server) EnablePromptCache(minTokens int) *PromptCache {
	c := &PromptCache{MinTokens: minTokens, seen: map[[32]byte]struct{}{}}
	s.mu.Lock()
	s.cache = c
	s.mu.Unlock()
	return c
}

// promptBlocks splits a request into its prefix blocks in the order the
// provider caches them; marked says which blocks carry a cache mark
// (anthropic only), key is what separates caches besides the blocks.
type promptBlocks struct {
	blocks []json.RawMessage
	marked []bool
	key    string
}

// segmenter is implemented by the dialects that take part in caching.
type segmenter interface {
	segments(r *http.Request, body []byte) (promptBlocks, bool)
}

// account fills rep.Usage's input and cache counts for this request.
func (c *PromptCache) account(d Dialect, r *http.Request, body []byte, rep *Reply) {
	seg, ok := d.(segmenter)
	if !ok {
		return
	}
	pb, ok := seg.segments(r, body)
	if !ok {
		return
	}
	hashes, tokens := prefixes(pb)
	total := tokens[len(tokens)-1]
	var read, write int
	if d.Name() == "anthropic" {
		read, write = c.explicit(pb.marked, hashes, tokens)
	} else {
		read = c.implicit(hashes, tokens)
	}
	rep.Usage.InputTokens = total
	rep.Usage.CacheReadTokens = read
	rep.Usage.CacheWriteTokens = write
}

// prefixes returns the hash and token count of every prefix: index i
// covers blocks[0..i-1], so index 0 is the empty prefix (the key alone).
func prefixes(pb promptBlocks) ([][32]byte, []int) {
	hashes := make([][32]byte, len(pb.blocks)+1)
	tokens := make([]int, len(pb.blocks)+1)
	hashes[0] = sha256.Sum256([]byte(pb.key))
	for i, b := range pb.blocks {
		h := sha256.New()
		h.Write(hashes[i][:])
		h.Write(b)
		copy(hashes[i+1][:], h.Sum(nil))
		tokens[i+1] = tokens[i] + (len(b)+3)/4
	}
	return hashes, tokens
}

// explicit is Anthropic's accounting: read the longest cached prefix found
// at a mark or up to anthropicLookback blocks before it, write the prefix
// up to the last mark beyond what was read.
func (c *PromptCache) explicit(marked []bool, hashes [][32]byte, tokens []int) (read, write int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := 0
	for i, m := range marked {
		if !m {
			continue
		}
		end := i + 1
		last = end
		for j := end; j >= max(end-anthropicLookback, 1); j-- {
			if _, ok := c.seen[hashes[j]]; ok {
				read = max(read, tokens[j])
				break
			}
		}
	}
	if last == 0 || tokens[last] < c.MinTokens {
		return read, 0
	}
	for i, m := range marked {
		if m && tokens[i+1] >= c.MinTokens {
			c.remember(hashes[i+1])
		}
	}
	return read, max(tokens[last]-read, 0)
}

// implicit is the automatic caches' accounting: read the longest prefix
// seen before, then remember every prefix of this request.
func (c *PromptCache) implicit(hashes [][32]byte, tokens []int) (read int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for j := len(hashes) - 1; j >= 1; j-- {
		if _, ok := c.seen[hashes[j]]; ok && tokens[j] >= c.MinTokens {
			read = tokens[j]
			break
		}
	}
	for j := 1; j < len(hashes); j++ {
		if tokens[j] >= c.MinTokens {
			c.remember(hashes[j])
		}
	}
	return read
}

func (c *PromptCache) remember(h [32]byte) {
	if len(c.seen) >= maxCachedPrefixes {
		clear(c.seen)
	}
	c.seen[h] = struct{}{}
}

// unmark returns a block without its top-level cache_control member,
// keeping every other byte, and whether it had one: the mark says where to
// cache, it is not part of the cached prefix.
func unmark(b json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(b, []byte(`"cache_control"`)) {
		return b, false
	}
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return b, false
	}
	prevEnd := i + 1 // where the member before the current one ended
	for i = skipSpace(b, i+1); i < len(b) && b[i] == '"'; {
		keyEnd := skipValue(b, i)
		colon := skipSpace(b, keyEnd)
		if colon >= len(b) || b[colon] != ':' {
			return b, false
		}
		valEnd := skipValue(b, skipSpace(b, colon+1))
		if string(b[i:keyEnd]) == `"cache_control"` {
			out := append(bytes.Clone(b[:prevEnd]), b[valEnd:]...)
			if prevEnd == skipSpace(b, 0)+1 { // the first member: drop the comma after it
				rest := skipSpace(out, prevEnd)
				if rest < len(out) && out[rest] == ',' {
					out = append(out[:prevEnd], out[rest+1:]...)
				}
			}
			return out, true
		}
		prevEnd = valEnd
		i = skipSpace(b, valEnd)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		}
	}
	return b, false
}

// add appends the elements of a JSON array to pb; with marks, a block's
// cache_control marks it and is left out of its bytes.
func (pb *promptBlocks) add(items []json.RawMessage, marks bool) {
	for _, it := range items {
		marked := false
		if marks {
			it, marked = unmark(it)
		}
		pb.blocks = append(pb.blocks, it)
		pb.marked = append(pb.marked, marked)
	}
}

// segments of a Messages API body: tools, system blocks, then every
// content block of every message.
func (anthropicDialect) segments(_ *http.Request, body []byte) (promptBlocks, bool) {
	var req struct {
		Model    string            `json:"model"`
		Tools    []json.RawMessage `json:"tools"`
		System   json.RawMessage   `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return promptBlocks{}, false
	}
	pb := promptBlocks{key: "anthropic\x00" + req.Model}
	pb.add(req.Tools, true)
	pb.add(arrayOrOne(req.System), true)
	for _, m := range req.Messages {
		pb.add(arrayOrOne(m.Content), true)
	}
	return pb, true
}

// segments of a Responses API body: instructions, tools, input items.
func (openAIDialect) segments(_ *http.Request, body []byte) (promptBlocks, bool) {
	var req struct {
		Model          string            `json:"model"`
		Instructions   json.RawMessage   `json:"instructions"`
		Tools          []json.RawMessage `json:"tools"`
		Input          json.RawMessage   `json:"input"`
		PromptCacheKey string            `json:"prompt_cache_key"`
	}
	if json.Unmarshal(body, &req) != nil {
		return promptBlocks{}, false
	}
	pb := promptBlocks{key: "openai\x00" + req.Model + "\x00" + req.PromptCacheKey}
	pb.add(arrayOrOne(req.Instructions), false)
	pb.add(req.Tools, false)
	pb.add(arrayOrOne(req.Input), false)
	return pb, true
}

// segments of a Chat Completions body: tools, then messages.
func (chatCompatDialect) segments(_ *http.Request, body []byte) (promptBlocks, bool) {
	var req struct {
		Model          string            `json:"model"`
		Tools          []json.RawMessage `json:"tools"`
		Messages       []json.RawMessage `json:"messages"`
		PromptCacheKey string            `json:"prompt_cache_key"`
	}
	if json.Unmarshal(body, &req) != nil {
		return promptBlocks{}, false
	}
	pb := promptBlocks{key: "chat\x00" + req.Model + "\x00" + req.PromptCacheKey}
	pb.add(req.Tools, false)
	pb.add(req.Messages, false)
	return pb, true
}

// segments of a generateContent body: system instruction, tools, contents.
func (geminiDialect) segments(r *http.Request, body []byte) (promptBlocks, bool) {
	var req struct {
		System   json.RawMessage   `json:"systemInstruction"`
		Tools    []json.RawMessage `json:"tools"`
		Contents []json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(body, &req) != nil {
		return promptBlocks{}, false
	}
	model, _ := geminiDialect{}.Head(r, body)
	pb := promptBlocks{key: "gemini\x00" + model}
	pb.add(arrayOrOne(req.System), false)
	pb.add(req.Tools, false)
	pb.add(req.Contents, false)
	return pb, true
}

// arrayOrOne returns the elements of a JSON array, or the value itself as
// one block (a string system prompt or input), or nothing for null.
func arrayOrOne(v json.RawMessage) []json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	var items []json.RawMessage
	if v[0] == '[' && json.Unmarshal(v, &items) == nil {
		return items
	}
	return []json.RawMessage{v}
}
