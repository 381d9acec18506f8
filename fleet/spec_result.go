package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentfleet/agentfleet/internal/jsonschemas"
	"github.com/agentfleet/agentfleet/llm"
)

// Bounds and names of a task's result schema.
const (
	// MaxResultSchemaBytes bounds spec.result_schema.
	MaxResultSchemaBytes = 32 << 10
	// ResultFormatName names the schema in the session's llm.ResponseFormat.
	ResultFormatName = "result"
	// ReasonResultSchema ends a task whose final answer still did not
	// match its result_schema after the repair rounds; the result's error
	// lists the violations.
	ReasonResultSchema = "result_schema"
)

// ResultFormat returns the spec's result_schema as the response format
// its session must answer in (agent.Config.ResultSchema), nil when the
// spec has none: the task's final answer must then be one JSON object
// valid against it, stored as TaskResult.Structured. Only the task's own
// answer is bound; its subagents answer freely.
func (s TaskSpec) ResultFormat() *llm.ResponseFormat {
	if !s.hasResultSchema() {
		return nil
	}
	return &llm.ResponseFormat{Name: ResultFormatName, Schema: s.ResultSchema}
}

func (s TaskSpec) hasResultSchema() bool {
	t := bytes.TrimSpace(s.ResultSchema)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

// checkResultSchema refuses a result_schema that is too large, is not an
// object with "type": "object" at its root, does not compile as a JSON
// Schema, or refers to anything outside itself: a "$ref" to another
// document (a URL or a file) or an unknown "$schema" is refused, so
// neither the dispatcher nor a worker ever loads a document a task names.
func (s TaskSpec) checkResultSchema() *FieldError {
	if !s.hasResultSchema() {
		return nil
	}
	if n := len(s.ResultSchema); n > MaxResultSchemaBytes {
		return fieldErr("result_schema", "is %d bytes, more than the limit of %d; simplify the schema", n, MaxResultSchemaBytes)
	}
	if err := compileResultSchema(s.ResultSchema); err != nil {
		return fieldErr("result_schema", "is not a usable JSON Schema: %v", err)
	}
	if err := s.ResultFormat().Check(); err != nil {
		return fieldErr("result_schema", "%v", err)
	}
	return nil
}

// compileResultSchema compiles raw with a compiler that loads nothing.
func compileResultSchema(raw json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("it is not JSON: %v", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		return errors.New("it must be a JSON object such as {\"type\": \"object\", \"properties\": {...}}")
	}
	c := jsonschemas.NewCompiler()
	const id = "https://agentfleet.invalid/result_schema.json" // no relative $ref resolves to a file
	if err := c.AddResource(id, doc); err != nil {
		return err
	}
	_, err = c.Compile(id)
	return err
}
