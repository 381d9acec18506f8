package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentfleet/agentfleet/llm"
)

// maxToolSets bounds the tool sets a client keeps encoded.
const maxToolSets = 16

// toolsCache keeps the encoded "tools" array of the tool sets a client
// sent last. A session sends the same tools on every request, and so do all
// sessions of a profile, while encoding them costs more than the rest of a
// short request: encoding/json validates and compacts every schema. Reads
// take no lock; it is safe for concurrent use.
type toolsCache struct {
	mu   sync.Mutex                   // serialises writers
	sets atomic.Pointer[[]encodedSet] // immutable, newest last
}

// encodedSet is one tool set and its encoding. defs own their Parameters,
// so a caller changing its schema in place does not change the key.
type encodedSet struct {
	defs   []llm.ToolDefinition
	cached bool // the last tool carries a cache breakpoint
	json   []byte
}

// encoded returns the JSON array of tools, which buildRequest converted
// from defs, from the cache or by encoding and remembering it.
func (c *toolsCache) encoded(defs []llm.ToolDefinition, tools []wireTool) ([]byte, error) {
	if len(defs) != len(tools) || typedTools(defs) {
		return json.Marshal(tools) // provider tools and per-tool marks: rare, and not keyed here
	}
	cached := len(tools) > 0 && tools[len(tools)-1].CacheControl != nil
	if sets := c.sets.Load(); sets != nil {
		for i := range slices.Backward(*sets) {
			if s := (*sets)[i]; s.cached == cached && sameTools(s.defs, defs) {
				return s.json, nil
			}
		}
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return nil, err
	}
	c.remember(encodedSet{defs: ownTools(defs), cached: cached, json: b})
	return b, nil
}

func (c *toolsCache) remember(s encodedSet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var sets []encodedSet
	if old := c.sets.Load(); old != nil {
		sets = *old
	}
	if len(sets) >= maxToolSets {
		sets = sets[1:]
	}
	sets = append(append(make([]encodedSet, 0, len(sets)+1), sets...), s)
	c.sets.Store(&sets)
}

// typedTools reports whether any definition is a provider tool or asks
// for a cache mark of its own.
func typedTools(defs []llm.ToolDefinition) bool {
	for _, d := range defs {
		if d.Provider != nil || d.Cache {
			return true
		}
	}
	return false
}

func sameTools(a, b []llm.ToolDefinition) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].Parameters, b[i].Parameters) {
			return false
		}
	}
	return true
}

func ownTools(defs []llm.ToolDefinition) []llm.ToolDefinition {
	own := make([]llm.ToolDefinition, len(defs))
	for i, d := range defs {
		own[i] = llm.ToolDefinition{Name: d.Name, Description: d.Description, Parameters: bytes.Clone(d.Parameters)}
	}
	return own
}

// scratch is a reusable buffer with an encoder writing into it.
type scratch struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var scratchPool = sync.Pool{New: func() any {
	s := &scratch{}
	s.enc = json.NewEncoder(&s.buf)
	return s
}}

// maxPooledScratch keeps a huge request's buffer out of the pool.
const maxPooledScratch = 1 << 20

// requestBody encodes w exactly as json.Marshal(w) would, with the tools
// array from the cache: the head fields, "tools", then the tail fields.
func requestBody(w *wireRequest, defs []llm.ToolDefinition, cache *toolsCache) ([]byte, error) {
	var tools []byte
	if len(w.Tools) > 0 {
		var err error
		if tools, err = cache.encoded(defs, w.Tools); err != nil {
			return nil, err
		}
	}
	s := scratchPool.Get().(*scratch)
	defer func() {
		if s.buf.Cap() <= maxPooledScratch {
			scratchPool.Put(s)
		}
	}()
	s.buf.Reset()
	// Encode ends each value with a newline; the head is never {}.
	if err := s.enc.Encode(&w.wireHead); err != nil {
		return nil, err
	}
	s.buf.Truncate(s.buf.Len() - len("}\n"))
	if tools != nil {
		s.buf.WriteString(`,"tools":`)
		s.buf.Write(tools)
	}
	n := s.buf.Len()
	if err := s.enc.Encode(&w.wireTail); err != nil {
		return nil, err
	}
	if b := s.buf.Bytes(); b[n+1] == '}' { // an empty tail: close the object
		s.buf.Truncate(n)
		s.buf.WriteByte('}')
	} else { // the tail's "{" becomes the comma after the head
		b[n] = ','
		s.buf.Truncate(s.buf.Len() - len("\n"))
	}
	return bytes.Clone(s.buf.Bytes()), nil
}
