package llm

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Option values arrive either as Go values set by a caller or decoded from
// JSON or YAML configuration (float64, []any). The accessors below accept both
// and say which key is wrong when a value has the wrong type.

// Value returns the raw option key of provider and whether it is set.
func (o ProviderOptions) Value(provider, key string) (any, bool) {
	v, ok := o[provider][key]
	return v, ok
}

// Int returns an integer option. Whole floats (JSON numbers) are accepted.
func (o ProviderOptions) Int(provider, key string) (n int, ok bool, err error) {
	v, ok := o.Value(provider, key)
	if !ok || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int:
		return x, true, nil
	case int64:
		return int(x), true, nil
	case int32:
		return int(x), true, nil
	case float64:
		if x == math.Trunc(x) {
			return int(x), true, nil
		}
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i), true, nil
		}
	}
	return 0, false, optionError(provider, key, "an integer", v)
}

// Bool returns a boolean option.
func (o ProviderOptions) Bool(provider, key string) (b bool, ok bool, err error) {
	v, ok := o.Value(provider, key)
	if !ok || v == nil {
		return false, false, nil
	}
	if b, isBool := v.(bool); isBool {
		return b, true, nil
	}
	return false, false, optionError(provider, key, "a boolean", v)
}

// Strings returns a list-of-strings option. A single string is split on
// commas, so "a,b" and ["a", "b"] mean the same.
func (o ProviderOptions) Strings(provider, key string) ([]string, error) {
	v, ok := o.Value(provider, key)
	if !ok || v == nil {
		return nil, nil
	}
	switch x := v.(type) {
	case []string:
		return x, nil
	case string:
		var out []string
		for s := range strings.SplitSeq(x, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, isString := e.(string)
			if !isString {
				return nil, optionError(provider, key, "a list of strings", v)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, optionError(provider, key, "a list of strings", v)
}

func optionError(provider, key, want string, got any) error {
	return &Error{
		Kind:     ErrInvalidRequest,
		Provider: provider,
		Message: fmt.Sprintf("ProviderOptions[%q][%q] must be %s, got %T (%v)",
			provider, key, want, got, got),
	}
}
