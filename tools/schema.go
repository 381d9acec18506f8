package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentfleet/agentfleet/internal/jsonschemas"
)

// schemaCache holds compiled schemas keyed by their JSON text, so each
// distinct schema is compiled once per process however many registries or
// clones use it.
var schemaCache sync.Map // string -> compiledSchema

type compiledSchema struct {
	schema *jsonschema.Schema
	err    error
}

var schemaPrinter = message.NewPrinter(language.English)

// compileSchema returns the compiled form of raw, compiling it on first use.
func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	key := string(raw)
	if c, ok := schemaCache.Load(key); ok {
		return c.(compiledSchema).schema, c.(compiledSchema).err
	}
	c := compiledSchema{}
	c.schema, c.err = compile(raw)
	schemaCache.Store(key, c)
	return c.schema, c.err
}

func compile(raw json.RawMessage) (*jsonschema.Schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("the schema is not valid JSON: %w", err)
	}
	c := jsonschemas.NewCompiler()
	if err := c.AddResource("tool.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("tool.json")
}

// ValidateArgs checks JSON arguments against a tool's parameter schema. The
// error lists each violation with its JSON path and what was expected.
func ValidateArgs(schema, args json.RawMessage) error {
	sch, err := compileSchema(schema)
	if err != nil {
		return fmt.Errorf("the tool's parameter schema does not compile: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("the arguments are not valid JSON: %w", err)
	}
	err = sch.Validate(v)
	if ve, ok := errors.AsType[*jsonschema.ValidationError](err); ok {
		return errors.New(describeViolations(ve))
	}
	return err
}

// describeViolations renders the leaf causes of a validation error as
// "at /path: message" lines.
func describeViolations(ve *jsonschema.ValidationError) string {
	var lines []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			lines = append(lines, fmt.Sprintf("at %s: %s", jsonPath(e.InstanceLocation), e.ErrorKind.LocalizedString(schemaPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}

// jsonPath renders an instance location as a JSON pointer ("/" for the root).
func jsonPath(tokens []string) string {
	if len(tokens) == 0 {
		return "/ (the arguments object)"
	}
	return "/" + strings.Join(tokens, "/")
}
