package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Function declarations take an OpenAPI-style Schema, not JSON Schema: types
// are upper case (STRING, OBJECT), nullability is a flag, and keywords such
// as additionalProperties or $schema are rejected. convertSchema translates
// the subset that has a counterpart and drops the rest.

// schemaKeys are copied unchanged.
var schemaKeys = map[string]bool{
	"description": true, "format": true, "enum": true, "required": true, "nullable": true,
	"minItems": true, "maxItems": true, "minimum": true, "maximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "title": true, "default": true,
	"example": true, "propertyOrdering": true, "minProperties": true, "maxProperties": true,
}

// convertSchema returns the declaration parameters for a JSON Schema, nil for
// a tool without parameters (an OBJECT with no properties is refused by the
// API).
func convertSchema(tool string, raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, invalidRequest(fmt.Sprintf("tool %q: Parameters is not a JSON Schema object: %v", tool, err))
	}
	if props, _ := s["properties"].(map[string]any); len(props) == 0 && (s["type"] == nil || s["type"] == "object") {
		return nil, nil
	}
	return convertNode(s), nil
}

func convertNode(s map[string]any) map[string]any {
	out := make(map[string]any, len(s))
	for k, v := range s {
		switch {
		case k == "type":
			convertType(out, v)
		case k == "const":
			out["enum"] = []any{v}
		case k == "properties":
			if props, ok := v.(map[string]any); ok {
				conv := make(map[string]any, len(props))
				for name, p := range props {
					if pm, ok := p.(map[string]any); ok {
						conv[name] = convertNode(pm)
					}
				}
				out[k] = conv
			}
		case k == "items":
			if im, ok := v.(map[string]any); ok {
				out[k] = convertNode(im)
			}
		case k == "anyOf" || k == "oneOf":
			if list, ok := v.([]any); ok {
				conv := make([]any, 0, len(list))
				for _, e := range list {
					if em, ok := e.(map[string]any); ok {
						conv = append(conv, convertNode(em))
					}
				}
				out["anyOf"] = conv
			}
		case schemaKeys[k]:
			out[k] = v
		}
	}
	return out
}

// convertType maps "string" to STRING and ["string", "null"] to STRING with
// nullable.
func convertType(out map[string]any, v any) {
	switch t := v.(type) {
	case string:
		out["type"] = strings.ToUpper(t)
	case []any:
		for _, e := range t {
			name, _ := e.(string)
			if name == "null" {
				out["nullable"] = true
			} else if name != "" && out["type"] == nil {
				out["type"] = strings.ToUpper(name)
			}
		}
	}
}
