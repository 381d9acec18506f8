package sim

import (
	"bytes"
	"encoding/json"
)

// bodyHead holds the top-level request fields every JSON dialect shares.
type bodyHead struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
}

// head returns the shared fields of a request body, zero when absent or when
// the body is not a JSON object. It walks the top level once and decodes
// only those two values: the fleet benchmark sends this server thousands of
// requests a second, each carrying a system prompt and tool schemas that a
// full decode would build for nothing. Anything it cannot walk goes to
// encoding/json. It does not validate the rest of the body: a truncated
// object may still yield its fields, where encoding/json would yield none.
func head(body []byte) bodyHead {
	var h bodyHead
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return h
	}
	for i = skipSpace(body, i+1); i < len(body) && body[i] != '}'; {
		keyEnd := skipValue(body, i)
		valStart := skipSpace(body, keyEnd)
		if body[i] != '"' || valStart >= len(body) || body[valStart] != ':' {
			return slowHead(body)
		}
		valStart = skipSpace(body, valStart+1)
		valEnd := skipValue(body, valStart)
		switch string(body[i:keyEnd]) {
		case `"model"`:
			h.Model = headString(body[valStart:valEnd])
		case `"stream"`:
			h.Stream = string(body[valStart:valEnd]) == "true"
		}
		i = skipSpace(body, valEnd)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return h
}

// headString decodes a JSON string value: directly when it is quoted
// printable ASCII without escapes (every model name), else with
// encoding/json. A value that is not a string gives "".
func headString(v []byte) string {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		plain := true
		for _, c := range v[1 : len(v)-1] {
			if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(v[1 : len(v)-1])
		}
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// slowHead decodes the fields with encoding/json.
func slowHead(body []byte) bodyHead {
	var h bodyHead
	_ = json.Unmarshal(body, &h)
	return h
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at i: past the
// closing quote of a string, the matching bracket of an object or array, or
// the last byte of a literal or number. It does not validate.
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i)
			if depth == 0 {
				return i
			}
			i--
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // a literal ended by its container
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\n', '\r', ':':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// stringEnd returns the index just past the string starting at b[i] == '"',
// or len(b) when it is not closed. It jumps from quote to quote and counts
// the backslashes before each: an odd count escapes it.
func stringEnd(b []byte, i int) int {
	start := i + 1
	for i = start; ; i++ {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		i += j
		k := i
		for k > start && b[k-1] == '\\' {
			k--
		}
		if (i-k)%2 == 0 {
			return i + 1
		}
	}
}

// topFields returns the raw values of the wanted top-level keys of a JSON
// object body, walking it once as head does so a large prompt is skipped,
// not decoded. Anything it cannot walk goes to encoding/json.
func topFields(body []byte, keys ...string) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return out
	}
	for i = skipSpace(body, i+1); i < len(body) && body[i] != '}'; {
		keyEnd := skipValue(body, i)
		valStart := skipSpace(body, keyEnd)
		if body[i] != '"' || valStart >= len(body) || body[valStart] != ':' {
			return slowFields(body, keys)
		}
		valStart = skipSpace(body, valStart+1)
		valEnd := skipValue(body, valStart)
		key := body[i+1 : keyEnd-1]
		for _, k := range keys {
			if string(key) == k {
				out[k] = json.RawMessage(body[valStart:valEnd])
			}
		}
		i = skipSpace(body, valEnd)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	return out
}

func slowFields(body []byte, keys []string) map[string]json.RawMessage {
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	out := map[string]json.RawMessage{}
	for _, k := range keys {
		if v, ok := all[k]; ok {
			out[k] = v
		}
	}
	return out
}
