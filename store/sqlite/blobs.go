package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// PutToolOutput implements store.Store.
func (s *Store) PutToolOutput(ctx context.Context, p store.PutToolOutputParams) (store.ToolOutput, error) {
	const op = "PutToolOutput"
	p, err := s.limits.PreparePutToolOutput(p)
	if err != nil {
		return store.ToolOutput{}, err
	}
	now := s.stamp()
	o := store.ToolOutput{SessionID: p.SessionID, CallID: p.CallID, Tool: p.Tool, Output: p.Output,
		IsError: p.IsError, Size: int64(len(p.Output)), CreatedAt: micros(now)}
	_, err = s.w.ExecContext(ctx, `
INSERT INTO tool_outputs (session_id, call_id, tool, output, is_error, size, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (session_id, call_id) DO UPDATE SET tool = excluded.tool, output = excluded.output,
	is_error = excluded.is_error, size = excluded.size, created_at = excluded.created_at`,
		p.SessionID.String(), p.CallID, p.Tool, []byte(p.Output), p.IsError, o.Size, now)
	if err = translate(op, err); errors.Is(err, store.ErrNotFound) {
		return o, store.NotFoundf(op, "SessionID: no session %s", p.SessionID)
	}
	return o, err
}

// GetToolOutput implements store.Store.
func (s *Store) GetToolOutput(ctx context.Context, p store.GetToolOutputParams) (store.ToolOutput, error) {
	const op = "GetToolOutput"
	o := store.ToolOutput{SessionID: p.SessionID, CallID: p.CallID}
	var out []byte
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT tool, output, is_error, size, created_at FROM tool_outputs
WHERE session_id = ? AND call_id = ?`, p.SessionID.String(), p.CallID).Scan(&o.Tool, &out, &o.IsError, &o.Size, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return o, store.NotFoundf(op, "no output of call %q in session %s", p.CallID, p.SessionID)
	}
	o.Output, o.CreatedAt = string(out), micros(created)
	return o, translate(op, err)
}

// PutArtifact implements store.Store.
func (s *Store) PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error) {
	const op = "PutArtifact"
	p, err := s.limits.PreparePutArtifact(p)
	if err != nil {
		return store.Artifact{}, err
	}
	now := s.stamp()
	a := store.Artifact{TaskID: p.TaskID, Kind: p.Kind, Name: p.Name, ContentType: p.ContentType,
		Content: p.Content, Size: int64(len(p.Content)), CreatedAt: micros(now)}
	content := p.Content
	if content == nil {
		content = []byte{}
	}
	_, err = s.w.ExecContext(ctx, `
INSERT INTO artifacts (task_id, kind, name, content_type, content, size, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (task_id, kind, name) DO UPDATE SET content_type = excluded.content_type,
	content = excluded.content, size = excluded.size, created_at = excluded.created_at`,
		p.TaskID.String(), p.Kind, p.Name, p.ContentType, content, a.Size, now)
	if err = translate(op, err); errors.Is(err, store.ErrNotFound) {
		return a, store.NotFoundf(op, "TaskID: no task %s", p.TaskID)
	}
	return a, err
}

// GetArtifact implements store.Store.
func (s *Store) GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error) {
	const op = "GetArtifact"
	a := store.Artifact{TaskID: p.TaskID, Kind: p.Kind, Name: p.Name}
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT content_type, content, size, created_at FROM artifacts
WHERE task_id = ? AND kind = ? AND name = ?`, p.TaskID.String(), p.Kind, p.Name).Scan(&a.ContentType, &a.Content, &a.Size, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return a, store.NotFoundf(op, "no %s artifact %q of task %s", p.Kind, p.Name, p.TaskID)
	}
	a.CreatedAt = micros(created)
	return a, translate(op, err)
}

// LatestArtifact implements store.Store.
func (s *Store) LatestArtifact(ctx context.Context, p store.LatestArtifactParams) (store.Artifact, error) {
	const op = "LatestArtifact"
	a := store.Artifact{Kind: p.Kind, Name: p.Name}
	var task string
	var created int64
	err := s.r.QueryRowContext(ctx, `SELECT task_id, content_type, content, size, created_at FROM artifacts
WHERE kind = ? AND name = ? ORDER BY created_at DESC LIMIT 1`, p.Kind, p.Name).Scan(&task, &a.ContentType, &a.Content, &a.Size, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return a, store.NotFoundf(op, "no %s artifact %q", p.Kind, p.Name)
	}
	if err != nil {
		return a, translate(op, err)
	}
	a.CreatedAt = micros(created)
	a.TaskID, err = uuid.Parse(task)
	return a, err
}

// ListArtifacts implements store.Store.
func (s *Store) ListArtifacts(ctx context.Context, p store.ListArtifactsParams) ([]store.Artifact, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT kind, name, content_type, size, created_at FROM artifacts
WHERE task_id = ? ORDER BY kind, name`, p.TaskID.String())
	if err != nil {
		return nil, translate("ListArtifacts", err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.Artifact
	for rows.Next() {
		a := store.Artifact{TaskID: p.TaskID}
		var created int64
		if err := rows.Scan(&a.Kind, &a.Name, &a.ContentType, &a.Size, &created); err != nil {
			return nil, translate("ListArtifacts", err)
		}
		a.CreatedAt = micros(created)
		out = append(out, a)
	}
	return out, translate("ListArtifacts", rows.Err())
}
