package identity

import (
	"context"
	"testing"
)

func TestRoleInTakesTheHigherGrant(t *testing.T) {
	p := Principal{ID: "token:1", Grants: map[string]Role{"a": Approver, AllTenants: Viewer}}
	for _, c := range []struct {
		tenant string
		want   Role
	}{{"a", Approver}, {"b", Viewer}} {
		if got := p.RoleIn(c.tenant); got != c.want {
			t.Errorf("RoleIn(%q) = %q, want %q", c.tenant, got, c.want)
		}
	}
	if !p.Can("a", Submitter) || p.Can("a", Admin) || p.Can("b", Submitter) {
		t.Errorf("Can does not follow the role order for %+v", p.Grants)
	}
	none := Principal{ID: "token:2", Grants: map[string]Role{"a": Viewer}}
	if none.Can("b", Viewer) || none.RoleIn("b") != "" {
		t.Error("a principal without a grant in b can act in b")
	}
}

func TestParseRoleRefusesUnknown(t *testing.T) {
	if _, err := ParseRole("root"); err == nil {
		t.Fatal("ParseRole(root) = nil error")
	}
	if r, err := ParseRole("approver"); err != nil || r != Approver {
		t.Fatalf("ParseRole(approver) = %q, %v", r, err)
	}
	if Role("root").Includes(Viewer) {
		t.Error("an unknown role includes viewer")
	}
}

func TestContextCarriesThePrincipal(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("empty context carries a principal")
	}
	p := Principal{ID: "bootstrap", Grants: map[string]Role{AllTenants: Admin}}
	got, ok := FromContext(WithPrincipal(context.Background(), p))
	if !ok || got.ID != "bootstrap" {
		t.Fatalf("FromContext = %+v, %v", got, ok)
	}
	ts, all := got.Tenants()
	if !all || len(ts) != 0 {
		t.Fatalf("Tenants = %v, %v", ts, all)
	}
}
