package dispatcher

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// TestSubmitRefusesBadResultSchema: a result_schema that is not a usable
// JSON Schema, or names another document, is a 400 naming the field; a
// good one is accepted and kept in the stored spec.
func TestSubmitRefusesBadResultSchema(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	for _, c := range []struct{ name, schema, msg string }{
		{"unknown type", `{"type":"object","properties":{"n":{"type":"integr"}}}`, "not a usable JSON Schema"},
		{"array root", `{"type":"array"}`, `"type": "object"`},
		{"a file", `{"type":"object","properties":{"n":{"$ref":"file:///etc/passwd"}}}`, "names another document"},
	} {
		s := validSpec("structured")
		s.ResultSchema = json.RawMessage(c.schema)
		code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", s, testToken)
		if code != http.StatusBadRequest || detail.Code != api.CodeInvalid || detail.Field != "spec.result_schema" || !strings.Contains(detail.Message, c.msg) {
			t.Errorf("%s: %d %s, want 400 on spec.result_schema saying %q", c.name, code, raw, c.msg)
		}
	}
	s := validSpec("structured")
	s.ResultSchema = json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}}}`)
	code, _, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", s, testToken)
	if code != http.StatusCreated || !strings.Contains(string(raw), `"result_schema"`) {
		t.Errorf("a good result_schema: %d %s, want 201 with the schema in the spec", code, raw)
	}
}
