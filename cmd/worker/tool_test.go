package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkerTool(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stdout string
		stderr string
	}{
		{"read_file", []string{"tool", "read_file", "--dir", dir, "--args", `{"file_path":"a.txt"}`}, "", 0, "1 | one\n2 | two\n", ""},
		{"error result", []string{"tool", "read_file", "--dir", dir, "--args", `{"file_path":"nope"}`}, "", 1, "Tool error (read_file): nope does not exist", ""},
		{"schema failure is an error result", []string{"tool", "shell", "--dir", dir, "--args", `{"cmd":"ls"}`}, "", 1, "missing property 'command'", ""},
		{"args from stdin", []string{"tool", "shell", "--dir", dir, "--args", "-"}, `{"command":"cat a.txt | wc -l"}`, 0, "2", ""},
		{"patch on stdin", []string{"tool", "apply_patch", "--dir", dir}, "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+2\n*** End Patch\n", 0, "M a.txt", ""},
		{"unknown tool", []string{"tool", "frobnicate", "--dir", dir}, "", 2, "", `unknown tool "frobnicate"; available: apply_patch, edit_file`},
		{"bad JSON", []string{"tool", "glob", "--dir", dir, "--args", "{"}, "", 2, "", "--args is not valid JSON"},
		{"missing name", []string{"tool", "--dir", dir}, "", 2, "", "exactly one tool name"},
		{"unknown flag", []string{"tool", "glob", "--bogus"}, "", 2, "", "unknown flag: --bogus"},
		{"dir is not a directory", []string{"tool", "glob", "--dir", filepath.Join(dir, "a.txt")}, "", 2, "", "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := execute(context.Background(), tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String(), tt.stdout) || !strings.Contains(errOut.String(), tt.stderr) {
				t.Fatalf("stdout %q (want %q), stderr %q (want %q)", out.String(), tt.stdout, errOut.String(), tt.stderr)
			}
		})
	}
	data, _ := os.ReadFile(filepath.Join(dir, "a.txt"))
	if string(data) != "one\n2\n" {
		t.Fatalf("patch not applied: %q", data)
	}
}
