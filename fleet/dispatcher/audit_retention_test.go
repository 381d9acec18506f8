package dispatcher

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestAuditRetentionPerTenant: a running dispatcher prunes each tenant's
// audit entries by its own window (team-a: 1 day; team-b: for ever) and
// the others', untenanted ones included, by the default (audit_retention,
// 5 days here), on both stores.
func TestAuditRetentionPerTenant(t *testing.T) {
	const day = 24 * time.Hour
	bothStores(t, func(t *testing.T, mk storeMaker) {
		ctx := context.Background()
		// An entry's target names its tenant and age in days.
		entries := map[string][]int{"team-a": {3, 0}, "team-b": {100, 0}, "team-c": {10, 3}, "": {10, 3}}
		withEntries := func(t testing.TB) store.Store {
			st := mk(t)
			now := time.Now()
			for tenant, ages := range entries {
				for _, age := range ages {
					e := store.AuditEntry{At: now.Add(-time.Duration(age)*day - time.Minute), Principal: "bootstrap", Tenant: tenant,
						Action: "task.submit", Target: fmt.Sprintf("%s/%d", tenant, age), Status: 201}
					if _, err := st.AppendAudit(ctx, e); err != nil {
						t.Fatal(err)
					}
				}
			}
			return st
		}
		b := setupAPIWith(t, withEntries, func(c *Config) {
			c.AuditRetention = 5 * day
			c.Retention = Retention{Tenants: map[string]RetentionPolicy{
				"team-a": {Audit: day}, "team-b": {Audit: -1}, "team-c": {Turns: 30 * day}}}
		})
		left := func() []string {
			page, err := b.st.ListAudit(ctx, store.ListAuditParams{})
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
		want := []string{"/3", "team-a/0", "team-b/0", "team-b/100", "team-c/3"}
		testenv.Eventually(t, testWait, "the audit log pruned at start by each tenant's window", func() bool {
			return slices.Equal(left(), want)
		})
		if n, err := b.d.pruneAuditOnce(ctx, time.Now()); err != nil || n != 0 {
			t.Fatalf("a second prune deleted %d, %v; want nothing more", n, err)
		}
		if got := left(); !slices.Equal(got, want) {
			t.Fatalf("after a second prune: %v, want %v", got, want)
		}
		v, err := b.client.Retention(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if v.Default.Audit != fleet.Duration(5*day) || v.Tenants["team-a"].Audit != fleet.Duration(day) ||
			v.Tenants["team-b"].Audit >= 0 || v.Tenants["team-c"].Audit != fleet.Duration(5*day) {
			t.Fatalf("GET /v1/retention's audit windows: default %v, tenants %+v", time.Duration(v.Default.Audit), v.Tenants)
		}
	})
}

// TestAuditWindowsResolve: retention.default.audit overrides
// audit_retention, a tenant without an audit window follows the default.
func TestAuditWindowsResolve(t *testing.T) {
	c := Config{Retention: Retention{Default: RetentionPolicy{Audit: 48 * time.Hour},
		Tenants: map[string]RetentionPolicy{"a": {Audit: -1}, "b": {Turns: 2 * time.Hour}, "c": {Audit: 3 * time.Hour}}}}.WithDefaults()
	def, own, windows := c.auditWindows()
	if def != 48*time.Hour || !slices.Equal(own, []string{"a", "c"}) || windows["a"] != -1 || windows["c"] != 3*time.Hour {
		t.Fatalf("auditWindows: default %s, own %v %v; want 48h, [a c] with -1 and 3h", def, own, windows)
	}
	if def, _, _ := (Config{}).WithDefaults().auditWindows(); def != DefaultAuditRetention {
		t.Fatalf("the default audit window without configuration: %s, want %s", def, DefaultAuditRetention)
	}
}

// TestAuditRetentionValidate: an audit window under the floor is an
// error naming its key; negative windows are valid.
func TestAuditRetentionValidate(t *testing.T) {
	err := Config{AuditRetention: time.Minute, Retention: Retention{Default: RetentionPolicy{Audit: 30 * time.Minute},
		Tenants: map[string]RetentionPolicy{"a": {Audit: time.Second}}}}.WithDefaults().Validate()
	for _, key := range []string{"audit_retention is 1m0s", "retention.default.audit is 30m0s", "retention.tenants.a.audit is 1s"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Fatalf("audit windows under the floor: %v, want %q named", err, key)
		}
	}
	if err := (Config{AuditRetention: -1, Retention: Retention{Tenants: map[string]RetentionPolicy{"a": {Audit: -1}, "b": {Audit: time.Hour}}}}).WithDefaults().Validate(); err != nil {
		t.Fatalf("valid audit windows: %v", err)
	}
}
