package storetest

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// principalTests check tenants on tasks, API tokens and the audit log.
var principalTests = map[string]func(*testing.T, *bundle){
	"TenantDefaultsAndChildrenInherit": func(t *testing.T, b *bundle) {
		plain := b.task(t, store.CreateTaskParams{})
		if plain.Tenant != store.DefaultTenant || plain.SubmittedBy != "" {
			t.Fatalf("a task created without a tenant: tenant %q by %q, want %q and none", plain.Tenant, plain.SubmittedBy, store.DefaultTenant)
		}
		root := b.task(t, store.CreateTaskParams{Tenant: "team-a", SubmittedBy: "token:1"})
		child := b.task(t, store.CreateTaskParams{ParentID: root.ID, Tenant: "team-b", SubmittedBy: "someone"})
		if got := b.get(t, child.ID); got.Tenant != "team-a" || got.SubmittedBy != "token:1" {
			t.Fatalf("child: tenant %q by %q, want its parent's team-a, token:1", got.Tenant, got.SubmittedBy)
		}
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{
			{Spec: []byte(`{}`), Tenant: "team-b"}, {Spec: []byte(`{}`), ParentID: child.ID, Tenant: "team-b"},
		}})
		if err != nil {
			t.Fatalf("CreateTasks: %v", err)
		}
		if res[0].Task.Tenant != "team-b" || res[1].Task.Tenant != "team-a" {
			t.Fatalf("batch: tenants %q, %q, want team-b and the parent's team-a", res[0].Task.Tenant, res[1].Task.Tenant)
		}
	},
	"ListCountUsageByTenant": func(t *testing.T, b *bundle) {
		a := b.task(t, store.CreateTaskParams{Tenant: "team-a"})
		bt := b.task(t, store.CreateTaskParams{Tenant: "team-b"})
		b.session(t, a.ID)
		b.session(t, bt.ID)
		page, err := b.s.ListTasks(b.ctx, store.ListTasksParams{Tenants: []string{"team-a"}})
		if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != a.ID {
			t.Fatalf("ListTasks of team-a: %v, %v; want only %s", ids(page.Tasks), err, a.ID)
		}
		if page, _ := b.s.ListTasks(b.ctx, store.ListTasksParams{Tenants: []string{}}); len(page.Tasks) != 0 {
			t.Fatalf("ListTasks of no tenant listed %d tasks", len(page.Tasks))
		}
		if page, _ := b.s.ListTasks(b.ctx, store.ListTasksParams{}); len(page.Tasks) != 2 {
			t.Fatalf("ListTasks without a tenant filter listed %d tasks, want 2", len(page.Tasks))
		}
		counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{Tenants: []string{"team-b", "team-c"}})
		if err != nil || counts[store.TaskQueued] != 1 {
			t.Fatalf("CountTasks of team-b: %v, %v", counts, err)
		}
		rows, err := b.s.Usage(b.ctx, store.UsageParams{Tenants: []string{"team-a"}})
		if err != nil || len(rows) != 1 || rows[0].Sessions != 1 {
			t.Fatalf("Usage of team-a: %+v, %v; want one session", rows, err)
		}
	},
	"Tokens": func(t *testing.T, b *bundle) {
		hash := sha256.Sum256([]byte("secret"))
		exp := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
		tok, err := b.s.CreateToken(b.ctx, store.CreateTokenParams{Name: "ci", Hash: hash[:], Grants: map[string]string{"team-a": "submitter"},
			DefaultTenant: "team-a", ExpiresAt: exp, CreatedBy: "bootstrap"})
		if err != nil {
			t.Fatalf("CreateToken: %v", err)
		}
		got, err := b.s.TokenByHash(b.ctx, hash[:])
		if err != nil || got.ID != tok.ID || got.Grants["team-a"] != "submitter" || !got.ExpiresAt.Equal(exp) || !got.RevokedAt.IsZero() || got.CreatedBy != "bootstrap" {
			t.Fatalf("TokenByHash: %+v, %v", got, err)
		}
		recent(t, "CreatedAt", got.CreatedAt)
		other := sha256.Sum256([]byte("other"))
		_, err = b.s.TokenByHash(b.ctx, other[:])
		wantErr(t, err, store.ErrNotFound)
		_, err = b.s.CreateToken(b.ctx, store.CreateTokenParams{Name: "dup", Hash: hash[:], Grants: map[string]string{"*": "viewer"}, DefaultTenant: "d", CreatedBy: "x"})
		wantErr(t, err, store.ErrConflict)
		_, err = b.s.CreateToken(b.ctx, store.CreateTokenParams{Name: "short", Hash: []byte("x"), Grants: map[string]string{"*": "viewer"}, DefaultTenant: "d", CreatedBy: "x"})
		wantErr(t, err, store.ErrInvalid)
		revoked, err := b.s.RevokeToken(b.ctx, tok.ID)
		if err != nil || revoked.RevokedAt.IsZero() {
			t.Fatalf("RevokeToken: %+v, %v", revoked, err)
		}
		again, _ := b.s.RevokeToken(b.ctx, tok.ID)
		if !again.RevokedAt.Equal(revoked.RevokedAt) {
			t.Fatalf("a second revoke moved RevokedAt from %v to %v", revoked.RevokedAt, again.RevokedAt)
		}
		if got, _ := b.s.TokenByHash(b.ctx, hash[:]); got.RevokedAt.IsZero() {
			t.Fatal("TokenByHash does not show the revocation")
		}
		if live, _ := b.s.ListTokens(b.ctx, store.ListTokensParams{}); len(live) != 0 {
			t.Fatalf("ListTokens lists %d revoked tokens", len(live))
		}
		if all, _ := b.s.ListTokens(b.ctx, store.ListTokensParams{IncludeRevoked: true}); len(all) != 1 {
			t.Fatalf("ListTokens with revoked lists %d tokens, want 1", len(all))
		}
		_, err = b.s.RevokeToken(b.ctx, uuid.New())
		wantErr(t, err, store.ErrNotFound)
	},
	"Audit": func(t *testing.T, b *bundle) {
		old := time.Now().Add(-48 * time.Hour)
		for i, e := range []store.AuditEntry{
			{At: old, Principal: "token:a", Tenant: "team-a", Action: "task.submit", Target: "t1", Status: 201},
			{Principal: "token:a", Tenant: "team-a", Action: "task.cancel", Target: "t1", Status: 200},
			{Principal: "token:b", Tenant: "team-b", Action: "approval.approve", Target: "t2/c1", Status: 403, Error: "forbidden"},
		} {
			got, err := b.s.AppendAudit(b.ctx, e)
			if err != nil || got.ID == 0 || got.At.IsZero() {
				t.Fatalf("AppendAudit %d: %+v, %v", i, got, err)
			}
		}
		_, err := b.s.AppendAudit(b.ctx, store.AuditEntry{Action: "x"})
		wantErr(t, err, store.ErrInvalid)
		list := func(p store.ListAuditParams) []string {
			t.Helper()
			page, err := b.s.ListAudit(b.ctx, p)
			if err != nil {
				t.Fatalf("ListAudit %+v: %v", p, err)
			}
			var out []string
			for _, e := range page.Entries {
				out = append(out, e.Action)
			}
			return out
		}
		if got := list(store.ListAuditParams{}); !slices.Equal(got, []string{"approval.approve", "task.cancel", "task.submit"}) {
			t.Fatalf("all entries, newest first: %v", got)
		}
		if got := list(store.ListAuditParams{Tenants: []string{"team-a"}, Action: "task.cancel"}); !slices.Equal(got, []string{"task.cancel"}) {
			t.Fatalf("team-a's cancels: %v", got)
		}
		if got := list(store.ListAuditParams{Principal: "token:b"}); !slices.Equal(got, []string{"approval.approve"}) {
			t.Fatalf("token:b's entries: %v", got)
		}
		if got := list(store.ListAuditParams{Until: time.Now().Add(-time.Hour)}); !slices.Equal(got, []string{"task.submit"}) {
			t.Fatalf("entries before an hour ago: %v", got)
		}
		first, err := b.s.ListAudit(b.ctx, store.ListAuditParams{Limit: 2})
		if err != nil || len(first.Entries) != 2 || first.NextCursor == "" {
			t.Fatalf("first page: %+v, %v", first, err)
		}
		if got := list(store.ListAuditParams{Limit: 2, Cursor: first.NextCursor}); !slices.Equal(got, []string{"task.submit"}) {
			t.Fatalf("second page: %v", got)
		}
		n, err := b.s.DeleteAudit(b.ctx, store.DeleteAuditParams{Before: time.Now().Add(-24 * time.Hour)})
		if err != nil || n != 1 {
			t.Fatalf("DeleteAudit deleted %d, %v; want the one old entry", n, err)
		}
		if got := list(store.ListAuditParams{}); len(got) != 2 {
			t.Fatalf("after the delete: %v", got)
		}
	},
	"AuditDeleteByTenant": func(t *testing.T, b *bundle) {
		now := time.Now()
		day := 24 * time.Hour
		// An entry's Target says its tenant and age in days.
		for _, tenant := range []string{"team-a", "team-b", ""} {
			for _, age := range []int{10, 3, 0} {
				e := store.AuditEntry{At: now.Add(-time.Duration(age) * day), Principal: "token:x", Tenant: tenant,
					Action: "task.submit", Target: fmt.Sprintf("%s/%d", tenant, age), Status: 201}
				if _, err := b.s.AppendAudit(b.ctx, e); err != nil {
					t.Fatalf("AppendAudit %+v: %v", e, err)
				}
			}
		}
		left := func() []string {
			t.Helper()
			page, err := b.s.ListAudit(b.ctx, store.ListAuditParams{})
			if err != nil {
				t.Fatalf("ListAudit: %v", err)
			}
			var out []string
			for _, e := range page.Entries {
				out = append(out, e.Target)
			}
			slices.Sort(out)
			return out
		}
		del := func(p store.DeleteAuditParams, want int64) {
			t.Helper()
			if n, err := b.s.DeleteAudit(b.ctx, p); err != nil || n != want {
				t.Fatalf("DeleteAudit %+v deleted %d, %v; want %d", p, n, err, want)
			}
		}
		_, err := b.s.DeleteAudit(b.ctx, store.DeleteAuditParams{Tenants: []string{"team-a"}})
		wantErr(t, err, store.ErrInvalid)
		del(store.DeleteAuditParams{Before: now, Tenants: []string{}}, 0)
		// team-a's own window, 1 day: its 10- and 3-day-old entries go.
		del(store.DeleteAuditParams{Before: now.Add(-day), Tenants: []string{"team-a"}}, 2)
		// The default, 5 days, for all but team-a: team-b's and the
		// untenanted 10-day-old entries go, team-a's newest stays.
		del(store.DeleteAuditParams{Before: now.Add(-5 * day), ExceptTenants: []string{"team-a"}}, 2)
		want := []string{"/0", "/3", "team-a/0", "team-b/0", "team-b/3"}
		if got := left(); !slices.Equal(got, want) {
			t.Fatalf("after the tenant's and the default's windows: %v, want %v", got, want)
		}
		// Excepting both tenants leaves only the untenanted entries.
		del(store.DeleteAuditParams{Before: now.Add(-day), ExceptTenants: []string{"team-a", "team-b"}}, 1)
		want = []string{"/0", "team-a/0", "team-b/0", "team-b/3"}
		if got := left(); !slices.Equal(got, want) {
			t.Fatalf("after a default that excepts both tenants: %v, want %v", got, want)
		}
	},
}
