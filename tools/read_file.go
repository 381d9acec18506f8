package tools

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

//go:embed read_file.md
var readFileDescription string

// ReadFileParams are the arguments of the read_file tool.
type ReadFileParams struct {
	FilePath string `json:"file_path"`
	Offset   int    `json:"offset,omitempty"` // 1-based first line
	Limit    int    `json:"limit,omitempty"`  // lines; DefaultReadLimit when 0
}

// DefaultReadLimit is how many lines read_file returns when no limit is given.
const DefaultReadLimit = 2000

// MaxImageBytes bounds the size of an image read_file returns.
const MaxImageBytes = 10 << 20

const readFileSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "minLength": 1, "description": "Path of the file, absolute or relative to the working directory."},
    "offset": {"type": "integer", "minimum": 1, "description": "1-based line number to start at."},
    "limit": {"type": "integer", "minimum": 1, "description": "Maximum number of lines to return (default 2000)."}
  },
  "required": ["file_path"],
  "additionalProperties": false
}`

// ReadFile returns the core read_file tool.
func ReadFile() Tool {
	return Typed(coreTool("read_file", readFileDescription, readFileSchema, false, ArgPaths("file_path")), RunReadFile)
}

// RunReadFile reads a slice of a text file as "N | line" lines, or returns
// an image as image content. The file is streamed, so memory stays bounded
// by the lines returned whatever the file's size. Binary files are refused.
func RunReadFile(ctx context.Context, call Call, p ReadFileParams) (Output, error) {
	r, info, err := openFile(ctx, call.Env, p.FilePath)
	if err != nil {
		return Output{}, err
	}
	defer func() { _ = r.Close() }()
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(r, h), 64<<10)
	head, _ := br.Peek(sniffLen)
	var out Output
	switch media := imageType(head); {
	case media != "":
		out, err = readImage(p.FilePath, media, br)
	case isBinary(head):
		err = fmt.Errorf("%s is a binary file, not text; read_file shows text only (inspect it with a command such as `file` or `xxd | head` instead)", p.FilePath)
	default:
		out.Text, err = readLines(br, p.Offset, p.Limit)
		if err != nil {
			err = fmt.Errorf("%s: %w", p.FilePath, err)
		}
	}
	noteRead(call, p.FilePath, info, br, h)
	return out, err
}

// noteRead records in call.Reads that the session has seen path: with a
// hash of the whole content when the file is at most MaxHashBytes (the
// rest of the stream is read to finish it), else by size and time.
func noteRead(call Call, path string, info execenv.FileInfo, rest io.Reader, h hash.Hash) {
	if call.Reads == nil {
		return
	}
	if info.Size > MaxHashBytes {
		call.Reads.note(call.Env, path, info, nil)
		return
	}
	if _, err := io.Copy(io.Discard, rest); err != nil {
		call.Reads.note(call.Env, path, info, nil)
		return
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	call.Reads.note(call.Env, path, info, &sum)
}

// openFile opens path for streaming with errors the model can act on.
func openFile(ctx context.Context, env execenv.Environment, path string) (execenv.ReadCloser, execenv.FileInfo, error) {
	info, err := env.Stat(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, info, fmt.Errorf("%s does not exist; check the path (glob or list_dir can find files)", path)
	}
	if err != nil {
		return nil, info, err
	}
	if info.IsDir {
		return nil, info, fmt.Errorf("%s is a directory, not a file; use list_dir to see its entries", path)
	}
	r, err := env.OpenFile(ctx, path)
	return r, info, err
}

// readLines numbers lines [offset, offset+limit) of r. Lines before offset
// are skipped without being kept.
func readLines(br *bufio.Reader, offset, limit int) (string, error) {
	offset = max(offset, 1)
	if limit <= 0 {
		limit = DefaultReadLimit
	}
	skipped, err := skipLines(br, offset-1)
	if err != nil {
		return "", err
	}
	if skipped < offset-1 {
		return "", fmt.Errorf("offset %d is past the end of the file, which has %d lines", offset, skipped)
	}
	var lines []string
	for len(lines) < limit {
		line, err := br.ReadString('\n')
		if line != "" {
			lines = append(lines, strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r"))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
	}
	if len(lines) == 0 {
		return "(the file is empty)", nil
	}
	out := numberLines(lines, offset)
	if _, err := br.Peek(1); err == nil {
		next := offset + len(lines)
		out += fmt.Sprintf("\n\n[Showing lines %d-%d. The file continues; call read_file with offset=%d to read more.]", offset, next-1, next)
	}
	return out, nil
}

// skipLines discards n lines and returns how many it found.
func skipLines(br *bufio.Reader, n int) (int, error) {
	done := 0
	for done < n {
		_, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			done++
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			return done, nil
		default:
			return done, err
		}
	}
	return done, nil
}

// numberLines renders lines as "N | text" with N right-aligned, starting at first.
func numberLines(lines []string, first int) string {
	width := len(strconv.Itoa(first + len(lines) - 1))
	var b strings.Builder
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%*d | %s", width, first+i, strings.ToValidUTF8(l, "\uFFFD"))
	}
	return b.String()
}

const sniffLen = 8 << 10

// isBinary reports whether the start of a file looks binary: a NUL byte, or
// mostly bytes that are neither text nor valid UTF-8.
func isBinary(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	bad := 0
	for _, r := range string(head) {
		if r == '\uFFFD' || (r < 0x20 && r != '\n' && r != '\r' && r != '\t' && r != '\f' && r != '\v' && r != 0x1b) {
			bad++
		}
	}
	return len(head) > 0 && bad*10 > len(head)
}

// imageType returns the media type of a PNG, JPEG, GIF or WebP header, or "".
func imageType(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(head, []byte{0xFF, 0xD8, 0xFF}):
		return "image/jpeg"
	case bytes.HasPrefix(head, []byte("GIF87a")), bytes.HasPrefix(head, []byte("GIF89a")):
		return "image/gif"
	case len(head) >= 12 && string(head[:4]) == "RIFF" && string(head[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

func readImage(path, media string, r io.Reader) (Output, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxImageBytes+1))
	if err != nil {
		return Output{}, err
	}
	if len(data) > MaxImageBytes {
		return Output{}, fmt.Errorf("%s is an image larger than %d MB, too large to return", path, MaxImageBytes>>20)
	}
	return Output{
		Text:   fmt.Sprintf("Image %s (%s, %d bytes) is attached.", path, media, len(data)),
		Images: []llm.Image{{MediaType: media, Data: data}},
	}, nil
}
