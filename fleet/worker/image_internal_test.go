package worker

import (
	"errors"
	"strings"
	"testing"
)

func TestImageCredentialsGoOnlyToTheirRegistry(t *testing.T) {
	t.Setenv("AGENTFLEET_TEST_REGISTRY_TOKEN", " tok \n")
	c := ImageCacheConfig{Credentials: map[string]RegistryCredential{
		"ghcr": {Registry: "ghcr.io", Username: "bot", PasswordEnv: "AGENTFLEET_TEST_REGISTRY_TOKEN"},
		"hub":  {Registry: "docker.io", Username: "bot", PasswordEnv: "AGENTFLEET_TEST_REGISTRY_TOKEN"},
	}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	a, err := c.auth("ghcr", "ghcr.io/acme/app:1")
	if err != nil || a.Username != "bot" || a.Password != "tok" {
		t.Fatalf("auth %+v, %v; want bot and the trimmed token", a, err)
	}
	if a, err := c.auth("hub", "golang:1.22"); err != nil || a == nil {
		t.Errorf("docker.io credentials for a Docker Hub image: %+v, %v", a, err)
	}
	if _, err := c.auth("ghcr", "registry.example.com/acme/app:1"); !errors.Is(err, errNotAllowed) {
		t.Errorf("credentials of ghcr.io for another registry: %v, want not allowed", err)
	}
	if _, err := c.auth("nope", "ghcr.io/acme/app:1"); !errors.Is(err, errBadEnvironment) || !strings.Contains(err.Error(), "image_cache.credentials") {
		t.Errorf("unknown credentials: %v, want a bad environment naming image_cache.credentials", err)
	}
	if a, err := c.auth("", "ghcr.io/acme/app:1"); a != nil || err != nil {
		t.Errorf("no credentials named: %+v, %v; want anonymous", a, err)
	}
}

func TestImageCacheConfigErrorsNameTheKey(t *testing.T) {
	c := ImageCacheConfig{Dir: "relative", MaxSize: "lots", Credentials: map[string]RegistryCredential{
		"a": {Registry: "ghcr.io/acme", PasswordEnv: "X"},
		"b": {Registry: "ghcr.io"},
	}}
	err := c.Validate()
	for _, want := range []string{"image_cache.dir", "image_cache.max_size", "image_cache.credentials.a.registry", "image_cache.credentials.b needs exactly one"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v lacks %q", err, want)
		}
	}
}
