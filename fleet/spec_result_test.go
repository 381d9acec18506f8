package fleet

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResultSchemaValidate(t *testing.T) {
	spec := func(schema string) TaskSpec {
		return TaskSpec{Prompt: "p", Profile: "openai", ResultSchema: json.RawMessage(schema)}
	}
	secret := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"object"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	big := `{"type":"object","description":"` + strings.Repeat("x", MaxResultSchemaBytes) + `"}`
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object"`, "not JSON"},
		{`[1]`, "JSON object"},
		{`{"type":"array"}`, `"type": "object"`},
		{`{"type":"object","properties":{"n":{"type":"integr"}}}`, "not a usable JSON Schema"},
		{`{"type":"object","properties":{"n":{"$ref":"file://` + secret + `"}}}`, "names another document"},
		{`{"type":"object","properties":{"n":{"$ref":"other.json"}}}`, "names another document"},
		{`{"$schema":"https://example.com/meta","type":"object"}`, "names another document"},
		{big, "more than the limit"},
	} {
		err := spec(tc.schema).ValidateSubmission()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "spec.result_schema" || !strings.Contains(fe.Reason, tc.want) {
			t.Errorf("%.80s: %v, want spec.result_schema %q", tc.schema, err, tc.want)
		}
	}
	good := spec(`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
		"properties":{"n":{"$ref":"#/$defs/count"}},"required":["n"],"$defs":{"count":{"type":"integer","minimum":0}}}`)
	if err := good.ValidateSubmission(); err != nil {
		t.Fatalf("a valid schema: %v", err)
	}
	if f := good.ResultFormat(); f == nil || f.Name != ResultFormatName || f.Validate(`{"n": 3}`) != nil || f.Validate(`{"n": -1}`) == nil {
		t.Fatalf("ResultFormat %+v does not validate by the schema", f)
	}
	for _, none := range []string{"", "null"} {
		if f := spec(none).ResultFormat(); f != nil || spec(none).Validate() != nil {
			t.Errorf("result_schema %q: format %v, want none and a valid spec", none, f)
		}
	}
}
