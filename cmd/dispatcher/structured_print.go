package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/agentfleet/agentfleet/fleet"
)

// printStructured prints a result's structured answer (spec.result_schema)
// indented, after the final text, so `get` shows what a script would read.
func printStructured(w io.Writer, r fleet.TaskResult) {
	if len(r.Structured) == 0 {
		return
	}
	var b bytes.Buffer
	if json.Indent(&b, r.Structured, "", "  ") != nil {
		b.Reset()
		b.Write(r.Structured)
	}
	fmt.Fprintf(w, "\nstructured result:\n%s\n", b.String())
}
