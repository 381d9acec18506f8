// Package jsonschemas is the one way this module compiles a JSON Schema:
// with a compiler that loads nothing. A schema comes from a task spec, a
// tool (an MCP server's) or a caller of the library; none of them may make
// the worker read a file or fetch a URL through a "$ref" or "$schema", so
// every reference must resolve inside the schema itself.
package jsonschemas

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// ErrNoLoad is the error of a schema that names another document (the
// compiler reports it as text, not wrapped).
var ErrNoLoad = errors.New("names another document; only references inside the schema itself (#/...) are allowed")

// refuse is a jsonschema.URLLoader that loads nothing.
type refuse struct{}

func (refuse) Load(url string) (any, error) { return nil, fmt.Errorf("%q %w", url, ErrNoLoad) }

// NewCompiler returns a compiler whose every load of another document
// fails with ErrNoLoad.
func NewCompiler() *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuse{})
	return c
}
