package tools

import (
	"context"
	_ "embed"
	"fmt"
)

//go:embed write_file.md
var writeFileDescription string

// WriteFileParams are the arguments of the write_file tool.
type WriteFileParams struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

const writeFileSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "minLength": 1, "description": "Path of the file, absolute or relative to the working directory."},
    "content": {"type": "string", "description": "The whole new content of the file."}
  },
  "required": ["file_path", "content"],
  "additionalProperties": false
}`

// WriteFile returns the core write_file tool.
func WriteFile() Tool {
	return Typed(coreTool("write_file", writeFileDescription, writeFileSchema, true, ArgPaths("file_path")), RunWriteFile)
}

// RunWriteFile replaces (or creates, with its parent directories) a file and
// reports how many bytes it wrote. With call.Reads set, it refuses to
// overwrite an existing file the session has not read, or that changed
// since it was read (ErrStale).
func RunWriteFile(ctx context.Context, call Call, p WriteFileParams) (Output, error) {
	existed, err := call.Env.Exists(ctx, p.FilePath)
	if err != nil {
		return Output{}, err
	}
	if existed {
		if err := call.Reads.checkFresh(ctx, call.Env, p.FilePath, nil, true); err != nil {
			return Output{}, err
		}
	}
	if err := call.Env.WriteFile(ctx, p.FilePath, []byte(p.Content)); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", p.FilePath, err)
	}
	call.Reads.noteWritten(ctx, call.Env, p.FilePath, []byte(p.Content))
	verb := "Created"
	if existed {
		verb = "Overwrote"
	}
	return Output{Text: fmt.Sprintf("%s %s (%d bytes).", verb, p.FilePath, len(p.Content))}, nil
}
