package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// TestStructuredPrinted: get shows a task's structured result, indented.
func TestStructuredPrinted(t *testing.T) {
	var b bytes.Buffer
	printTask(&b, api.TaskView{State: "succeeded", Result: []byte(`{"final_text":"{\"sum\":5}","success":true,"structured":{"sum":5}}`)})
	if !strings.Contains(b.String(), "structured result:\n{\n  \"sum\": 5\n}\n") {
		t.Fatalf("get prints %q, want the structured result indented", b.String())
	}
}
