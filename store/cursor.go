package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// EncodeCursor makes the opaque ListTasks cursor that resumes after the task
// created at createdAt with id.
func EncodeCursor(createdAt time.Time, id uuid.UUID) string {
	raw := "v1:" + strconv.FormatInt(createdAt.UnixMicro(), 10) + ":" + id.String()
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// DecodeCursor reverses EncodeCursor; a malformed cursor is *InvalidError.
func DecodeCursor(c string) (time.Time, uuid.UUID, error) {
	bad := func(why string) (time.Time, uuid.UUID, error) {
		return time.Time{}, uuid.Nil, invalidf("Cursor", "%s; pass the NextCursor of a previous page or \"\"", why)
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return bad("not a cursor this store made")
	}
	parts := strings.Split(string(raw), ":")
	if len(parts) != 3 || parts[0] != "v1" {
		return bad("unknown cursor format")
	}
	micros, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return bad(fmt.Sprintf("bad time %q", parts[1]))
	}
	id, err := uuid.Parse(parts[2])
	if err != nil {
		return bad(fmt.Sprintf("bad id %q", parts[2]))
	}
	return time.UnixMicro(micros).UTC(), id, nil
}

// Page cuts tasks fetched with limit+1 rows into a TaskPage whose
// NextCursor resumes after the last task returned.
func Page(tasks []Task, limit int) TaskPage {
	if len(tasks) <= limit {
		return TaskPage{Tasks: tasks}
	}
	tasks = tasks[:limit]
	last := tasks[limit-1]
	return TaskPage{Tasks: tasks, NextCursor: EncodeCursor(last.CreatedAt, last.ID)}
}
