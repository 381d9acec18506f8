package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
)

// PutToolOutput implements store.Store.
func (s *Store) PutToolOutput(ctx context.Context, p store.PutToolOutputParams) (store.ToolOutput, error) {
	const op = "PutToolOutput"
	p, err := s.limits.PreparePutToolOutput(p)
	if err != nil {
		return store.ToolOutput{}, err
	}
	o := store.ToolOutput{SessionID: p.SessionID, CallID: p.CallID, Tool: p.Tool, Output: p.Output,
		IsError: p.IsError, Size: int64(len(p.Output)), CreatedAt: s.stamp()}
	_, err = s.pool.Exec(ctx, `
INSERT INTO tool_outputs (session_id, call_id, tool, output, is_error, size, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (session_id, call_id) DO UPDATE SET tool = excluded.tool, output = excluded.output,
	is_error = excluded.is_error, size = excluded.size, created_at = excluded.created_at`,
		o.SessionID, o.CallID, o.Tool, []byte(o.Output), o.IsError, o.Size, o.CreatedAt)
	if err := translate(op, err); errors.Is(err, store.ErrNotFound) {
		return o, store.NotFoundf(op, "SessionID: no session %s", p.SessionID)
	} else if err != nil {
		return o, err
	}
	return o, nil
}

// GetToolOutput implements store.Store.
func (s *Store) GetToolOutput(ctx context.Context, p store.GetToolOutputParams) (store.ToolOutput, error) {
	const op = "GetToolOutput"
	o := store.ToolOutput{SessionID: p.SessionID, CallID: p.CallID}
	var out []byte
	err := s.pool.QueryRow(ctx, `SELECT tool, output, is_error, size, created_at FROM tool_outputs
WHERE session_id = $1 AND call_id = $2`, p.SessionID, p.CallID).Scan(&o.Tool, &out, &o.IsError, &o.Size, &o.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return o, store.NotFoundf(op, "no output of call %q in session %s", p.CallID, p.SessionID)
	}
	o.Output, o.CreatedAt = string(out), o.CreatedAt.UTC()
	return o, translate(op, err)
}

// PutArtifact implements store.Store.
func (s *Store) PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error) {
	const op = "PutArtifact"
	p, err := s.limits.PreparePutArtifact(p)
	if err != nil {
		return store.Artifact{}, err
	}
	a := store.Artifact{TaskID: p.TaskID, Kind: p.Kind, Name: p.Name, ContentType: p.ContentType,
		Content: p.Content, Size: int64(len(p.Content)), CreatedAt: s.stamp()}
	content := p.Content
	if content == nil {
		content = []byte{}
	}
	_, err = s.pool.Exec(ctx, `
INSERT INTO artifacts (task_id, kind, name, content_type, content, size, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (task_id, kind, name) DO UPDATE SET content_type = excluded.content_type,
	content = excluded.content, size = excluded.size, created_at = excluded.created_at`,
		a.TaskID, a.Kind, a.Name, a.ContentType, content, a.Size, a.CreatedAt)
	if err := translate(op, err); errors.Is(err, store.ErrNotFound) {
		return a, store.NotFoundf(op, "TaskID: no task %s", p.TaskID)
	} else if err != nil {
		return a, err
	}
	return a, nil
}

// GetArtifact implements store.Store.
func (s *Store) GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error) {
	const op = "GetArtifact"
	a := store.Artifact{TaskID: p.TaskID, Kind: p.Kind, Name: p.Name}
	err := s.pool.QueryRow(ctx, `SELECT content_type, content, size, created_at FROM artifacts
WHERE task_id = $1 AND kind = $2 AND name = $3`, p.TaskID, p.Kind, p.Name).Scan(&a.ContentType, &a.Content, &a.Size, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, store.NotFoundf(op, "no %s artifact %q of task %s", p.Kind, p.Name, p.TaskID)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, translate(op, err)
}

// LatestArtifact implements store.Store.
func (s *Store) LatestArtifact(ctx context.Context, p store.LatestArtifactParams) (store.Artifact, error) {
	const op = "LatestArtifact"
	a := store.Artifact{Kind: p.Kind, Name: p.Name}
	err := s.pool.QueryRow(ctx, `SELECT task_id, content_type, content, size, created_at FROM artifacts
WHERE kind = $1 AND name = $2 ORDER BY created_at DESC LIMIT 1`, p.Kind, p.Name).Scan(&a.TaskID, &a.ContentType, &a.Content, &a.Size, &a.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return a, store.NotFoundf(op, "no %s artifact %q", p.Kind, p.Name)
	}
	a.CreatedAt = a.CreatedAt.UTC()
	return a, translate(op, err)
}

// ListArtifacts implements store.Store.
func (s *Store) ListArtifacts(ctx context.Context, p store.ListArtifactsParams) ([]store.Artifact, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, name, content_type, size, created_at FROM artifacts
WHERE task_id = $1 ORDER BY kind, name`, p.TaskID)
	if err != nil {
		return nil, translate("ListArtifacts", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Artifact, error) {
		a := store.Artifact{TaskID: p.TaskID}
		err := r.Scan(&a.Kind, &a.Name, &a.ContentType, &a.Size, &a.CreatedAt)
		a.CreatedAt = a.CreatedAt.UTC()
		return a, err
	})
	return out, translate("ListArtifacts", err)
}
