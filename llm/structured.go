package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentfleet/agentfleet/internal/jsonschemas"
)

// ResponseFormat asks the model for an answer that is one JSON object
// matching Schema. Adapters send it natively where the wire format has a
// field for it (OpenAI Responses text.format, Chat Completions
// response_format, Gemini responseJsonSchema) and otherwise as a forced
// call of a tool named Name whose input schema is Schema (Anthropic,
// Bedrock, Claude on Vertex); the call's arguments come back as the
// answer's text, so every wire format answers the same way. The answer of
// a response that ends the turn (no other tool calls) is validated against
// Schema; a mismatch is an *Error of kind ErrInvalidResponse whose Err is a
// *SchemaError.
type ResponseFormat struct {
	// Name names the format (and the forced tool): 1 to 64 letters,
	// digits, '_' or '-'.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Schema is a JSON Schema whose root is an object ("type": "object").
	Schema json.RawMessage `json:"schema"`
	// Strict asks providers that support it (OpenAI) to constrain decoding
	// to the schema exactly; such providers then require every property
	// in "required" and additionalProperties false.
	Strict bool `json:"strict,omitempty"`
}

var formatName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Check says what is wrong with f, nil when it can be sent: its name, a
// schema that compiles, and an object root.
func (f *ResponseFormat) Check() error {
	if !formatName.MatchString(f.Name) {
		return fmt.Errorf("ResponseFormat.Name %q must be 1 to 64 letters, digits, '_' or '-' (for example \"answer\")", f.Name)
	}
	var root struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(f.Schema, &root); err != nil {
		return fmt.Errorf("ResponseFormat.Schema is not a JSON object: %v", err)
	}
	if root.Type != "object" {
		return fmt.Errorf("ResponseFormat.Schema must have \"type\": \"object\" at its root (got %v); wrap other values in an object property", root.Type)
	}
	if _, err := f.compiled(); err != nil {
		return fmt.Errorf("ResponseFormat.Schema does not compile: %v", err)
	}
	return nil
}

// Validate checks an answer against the schema. A mismatch, or an answer
// that is not JSON, is a *SchemaError.
func (f *ResponseFormat) Validate(answer string) error {
	sch, err := f.compiled()
	if err != nil {
		return fmt.Errorf("ResponseFormat.Schema does not compile: %w", err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(answer))
	if err != nil {
		return &SchemaError{Format: f.Name, Answer: answer, Violations: []string{"the answer is not JSON: " + err.Error()}}
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(v); errors.As(err, &ve) {
		return &SchemaError{Format: f.Name, Answer: answer, Violations: violations(ve)}
	} else if err != nil {
		return err
	}
	return nil
}

// SchemaError is an answer that does not match its ResponseFormat.
type SchemaError struct {
	Format     string   // ResponseFormat.Name
	Answer     string   // the answer's text
	Violations []string // "at /path: what was expected", one per leaf
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("the answer does not match response format %q: %s", e.Format, strings.Join(e.Violations, "; "))
}

// CheckAnswer validates resp's text against req.ResponseFormat when the
// response ends the turn (it has no tool calls) and returns an *Error of
// kind ErrInvalidResponse on a mismatch; nil otherwise.
func CheckAnswer(provider string, req Request, resp *Response) error {
	f := req.ResponseFormat
	if f == nil || resp == nil || len(resp.ToolCalls()) > 0 {
		return nil
	}
	if err := f.Validate(resp.Text()); err != nil {
		return &Error{Kind: ErrInvalidResponse, Provider: provider, Code: "response_format", Message: err.Error(), Err: err}
	}
	return nil
}

// schemas caches compiled schemas by their text: a session sends the same
// one on every turn.
var schemas sync.Map // string -> compiled

type compiled struct {
	s   *jsonschema.Schema
	err error
}

var schemaPrinter = message.NewPrinter(language.English)

func (f *ResponseFormat) compiled() (*jsonschema.Schema, error) {
	key := string(f.Schema)
	if c, ok := schemas.Load(key); ok {
		return c.(compiled).s, c.(compiled).err
	}
	var c compiled
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(f.Schema))
	if err == nil {
		comp := jsonschemas.NewCompiler()
		if err = comp.AddResource("response.json", doc); err == nil {
			c.s, err = comp.Compile("response.json")
		}
	}
	c.err = err
	schemas.Store(key, c)
	return c.s, c.err
}

func violations(ve *jsonschema.ValidationError) []string {
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			at := "/" + strings.Join(e.InstanceLocation, "/")
			out = append(out, fmt.Sprintf("at %s: %s", at, e.ErrorKind.LocalizedString(schemaPrinter)))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// CheckToolChoice says what is wrong with req.ToolChoice, nil when it can
// be sent: a known mode, a named tool that is among req.Tools, and tools
// to choose from when the mode requires a call.
func CheckToolChoice(req Request) error {
	c := req.ToolChoice
	switch c.Mode {
	case "", ToolChoiceAuto, ToolChoiceNone:
		return nil
	case ToolChoiceRequired:
		if len(req.Tools) == 0 {
			return errors.New("Request.ToolChoice.Mode is required but Request.Tools is empty: offer a tool or use auto")
		}
		return nil
	case ToolChoiceNamed:
		if c.Name == "" {
			return errors.New("Request.ToolChoice.Name is empty: name the tool the model must call")
		}
		for _, t := range req.Tools {
			if t.Name == c.Name {
				return nil
			}
		}
		return fmt.Errorf("Request.ToolChoice.Name %q is not among Request.Tools: offer that tool or choose another", c.Name)
	}
	return fmt.Errorf("Request.ToolChoice.Mode %q is not auto, none, required or named", c.Mode)
}

// AsAnswerTool rewrites req for a wire format without a native response
// format: ResponseFormat becomes one more tool, named and described as the
// format with its schema as parameters, and the tool choice forces a call:
// of that tool when req offers no tools of its own or chooses none, of any
// tool when it chooses auto or required (the model may still work with its
// tools before it answers), and of the chosen tool when it names one. A
// request without ResponseFormat is returned as it is. The tool's name must
// not be one of req's tools.
func AsAnswerTool(req Request) (Request, error) {
	f := req.ResponseFormat
	if f == nil {
		return req, nil
	}
	if err := f.Check(); err != nil {
		return req, err
	}
	for _, t := range req.Tools {
		if t.Name == f.Name {
			return req, fmt.Errorf("ResponseFormat.Name %q is also the name of a tool in Request.Tools: rename one of them", f.Name)
		}
	}
	desc := f.Description
	if desc == "" {
		desc = "Give your final answer by calling this tool; its arguments are the answer."
	}
	own := len(req.Tools) > 0
	req.Tools = append(append(make([]ToolDefinition, 0, len(req.Tools)+1), req.Tools...),
		ToolDefinition{Name: f.Name, Description: desc, Parameters: f.Schema})
	switch req.ToolChoice.Mode {
	case "", ToolChoiceAuto, ToolChoiceRequired:
		if own {
			req.ToolChoice = ToolChoice{Mode: ToolChoiceRequired}
		} else {
			req.ToolChoice = ToolChoice{Mode: ToolChoiceNamed, Name: f.Name}
		}
	case ToolChoiceNone:
		req.ToolChoice = ToolChoice{Mode: ToolChoiceNamed, Name: f.Name}
	}
	return req, nil
}
