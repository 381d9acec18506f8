package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

func TestArgPaths(t *testing.T) {
	f := ArgPaths("file_path", "paths", "dir")
	got, err := f(json.RawMessage(`{"file_path":"a.go","paths":["b","","c/*"],"dir":null,"other":"x"}`))
	if err != nil || !slices.Equal(got, []string{"a.go", "b", "c/*"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if got, err := f(json.RawMessage(`{}`)); err != nil || len(got) != 0 {
		t.Errorf("no paths: %v, %v", got, err)
	}
	if _, err := f(json.RawMessage(`{"file_path":3}`)); err == nil || !strings.Contains(err.Error(), `"file_path"`) {
		t.Errorf("a number as a path: %v", err)
	}
}

func TestPatchPaths(t *testing.T) {
	text := "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+x\n*** Delete File: gone.txt\n" +
		"*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** End Patch"
	args, _ := json.Marshal(map[string]string{"input": text})
	got, err := PatchPaths("input")(args)
	if err != nil || !slices.Equal(got, []string{".git/hooks/pre-commit", "gone.txt", "a.go", "b.go"}) {
		t.Errorf("got %v, %v", got, err)
	}
	// The core tool reads its own argument, patch.
	got, err = ApplyPatch().Paths(json.RawMessage(`{"patch":` + strings.TrimPrefix(string(args), `{"input":`)))
	if err != nil || len(got) != 4 {
		t.Errorf("core apply_patch: %v, %v", got, err)
	}
	// A patch that does not parse is the error apply_patch gives.
	_, err = PatchPaths("input")(json.RawMessage(`{"input":"*** Add File: x\n+y"}`))
	if err == nil || !strings.Contains(err.Error(), "invalid patch") || !strings.Contains(err.Error(), "Nothing was changed") {
		t.Errorf("bad patch: %v", err)
	}
	if _, err := PatchPaths("input")(json.RawMessage(`{"patch":"x"}`)); err == nil || !strings.Contains(err.Error(), `"input"`) {
		t.Errorf("patch in another field: %v", err)
	}
}

// Every core tool but the shell says which paths a call touches.
func TestCoreToolsDeclareTheirPaths(t *testing.T) {
	wf, err := WebFetch(WebFetchConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range append(CoreTools(), wf) {
		if (tool.Paths == nil) != (tool.Name == "shell") {
			t.Errorf("%s: Paths set %v", tool.Name, tool.Paths != nil)
		}
	}
}

func TestValidateIsExecutesFirstSteps(t *testing.T) {
	r := testRegistry()
	for _, c := range []llm.ToolCall{
		{ID: "1", Name: "nope", Arguments: json.RawMessage(`{}`)},
		{ID: "2", Name: "echo", Arguments: json.RawMessage(`{"count":0}`)},
		{ID: "3", Name: "echo", Arguments: json.RawMessage(`[1]`)},
	} {
		_, _, err := r.Validate(c)
		res := r.Execute(t.Context(), c, nil, ExecOptions{})
		if err == nil || !res.IsError || err.Error() != res.Content {
			t.Errorf("%s %s: Validate %v, Execute %q", c.Name, c.Arguments, err, res.Content)
		}
	}
	tool, _, err := r.Validate(llm.ToolCall{ID: "4", Name: "echo", Arguments: json.RawMessage(` null `)})
	if err == nil || tool.Name != "" {
		t.Errorf("echo without its required text: %v", err)
	}
	tool, args, err := r.Validate(llm.ToolCall{ID: "5", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil || tool.Name != "echo" || string(args) != `{"text":"hi"}` {
		t.Errorf("valid call: %q %s %v", tool.Name, args, err)
	}
}
