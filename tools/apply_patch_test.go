package tools

import (
	"strings"
	"testing"
)

func TestApplyPatchTool(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		patch   string
		isError bool
		content []string
		after   map[string]string
	}{
		{
			name:    "crlf patch",
			files:   map[string]string{"a.txt": "one\ntwo\n"},
			patch:   "*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n one\r\n-two\r\n+2\r\n*** End Patch\r\n",
			content: []string{"Success. Updated the following files:\nM a.txt"},
			after:   map[string]string{"a.txt": "one\n2\n"},
		},
		{
			name:    "context that occurs twice",
			files:   map[string]string{"a.go": "if err != nil {\n\treturn err\n}\nx()\nif err != nil {\n\treturn err\n}\n"},
			patch:   "*** Begin Patch\n*** Update File: a.go\n@@\n if err != nil {\n-\treturn err\n+\treturn fmt.Errorf(\"x: %w\", err)\n }\n*** End Patch",
			isError: true,
			content: []string{"Failed to apply the patch at a.go", "occur 2 times (at lines 1, 5)", "Nothing was changed."},
			after:   map[string]string{"a.go": "if err != nil {\n\treturn err\n}\nx()\nif err != nil {\n\treturn err\n}\n"},
		},
		{
			name:    "partial success is reported",
			files:   map[string]string{},
			patch:   "*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch",
			isError: true,
			content: []string{"missing.txt: ", "does not exist", "applied and remain in place:\nA new.txt"},
			after:   map[string]string{"new.txt": "hi\n"},
		},
		{
			name:    "parse error changes nothing",
			files:   map[string]string{"a.txt": "x\n"},
			patch:   "*** Begin Patch\n*** Delete File: a.txt\n*** Frobnicate File: b\n*** End Patch",
			isError: true,
			content: []string{"Tool error (apply_patch): invalid patch: line 3:", "Nothing was changed"},
			after:   map[string]string{"a.txt": "x\n"},
		},
		{
			name:    "move and heredoc",
			files:   map[string]string{"old.txt": "v1\n"},
			patch:   "<<'EOF'\n*** Begin Patch\n*** Update File: old.txt\n*** Move to: sub/new.txt\n@@\n-v1\n+v2\n*** End Patch\nEOF",
			content: []string{"M old.txt -> sub/new.txt"},
			after:   map[string]string{"sub/new.txt": "v2\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := setup(t)
			for name, data := range tt.files {
				b.write(t, name, []byte(data))
			}
			res := b.call(t, "apply_patch", args{"patch": tt.patch})
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			for _, w := range tt.content {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q lacks %q", res.Content, w)
				}
			}
			for name, want := range tt.after {
				if got := b.read(t, name); got != want {
					t.Errorf("%s = %q, want %q", name, got, want)
				}
			}
		})
	}
}
