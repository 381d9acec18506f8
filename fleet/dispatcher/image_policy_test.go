package dispatcher

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

// An image outside the operator's policy.images is a 400 naming
// environment.image; an allowed one is stored as given, and a local spec
// naming none gets the default image.
func TestImagesBoundedAtSubmission(t *testing.T) {
	b := setupAPIWith(t, sqliteStore, func(c *Config) {
		c.Policy = fleet.Policy{Images: fleet.ImagePolicy{Allow: []string{"ghcr.io/acme", "golang"}, Default: "golang:1.22"}}
	})
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"outside", `{"prompt":"p","environment":{"image":"docker.io/evil/app:1"}}`, "spec.environment.image", "outside the images the operator allows"},
		{"look-alike", `{"prompt":"p","environment":{"image":"ghcr.io/acme-evil/app:1"}}`, "spec.environment.image", "ghcr.io/acme"},
		{"not a reference", `{"prompt":"p","environment":{"image":"Not A Ref"}}`, "spec.environment.image", "registry/name:tag"},
		{"ssh", `{"prompt":"p","environment":{"kind":"ssh","host":"h","user":"u","key_ref":"k","working_dir":"/w","image":"golang:1.22"}}`, "spec.environment.image", "local environment"},
		{"a secret", `{"prompt":"p","environment":{"image":"golang:1.22","image_credentials":"user:pass"}}`, "spec.environment.image_credentials", "never the credentials"},
	} {
		code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", c.body, testToken)
		if code != http.StatusBadRequest || detail.Code != api.CodeInvalid || detail.Field != c.field || !strings.Contains(detail.Message, c.msg) {
			t.Errorf("%s: %d %s, want 400 with field %q and a message containing %q", c.name, code, raw, c.field, c.msg)
		}
	}
	ctx := context.Background()
	for image, want := range map[string]string{"ghcr.io/acme/app:2": "ghcr.io/acme/app:2", "": "golang:1.22"} {
		got, err := b.client.Submit(ctx, fleet.TaskSpec{Prompt: "p", Environment: fleet.Environment{Image: image}})
		if err != nil {
			t.Fatalf("image %q: %v", image, err)
		}
		view, err := b.client.Get(ctx, got.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var stored fleet.TaskSpec
		if err := json.Unmarshal(view.Spec, &stored); err != nil || stored.Environment.Image != want {
			t.Errorf("image %q stored as %q (%v), want %q", image, stored.Environment.Image, err, want)
		}
	}
}
