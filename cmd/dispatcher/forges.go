package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/agentfleet/agentfleet/fleet/dispatcher"
)

// forgeConfigs reads the forges key of the configuration file:
// forges.<name>.<key> with the keys of dispatcher.ForgeConfig (kind,
// secret_file, secret_env, api_url, token_file, token_env, tenant, label,
// mention, prompt, triggers.users, triggers.collaborators, max_ci_repairs, spec),
// and spec_file, a JSON task spec to use as the template instead of an
// inline spec. The configuration loader lower-cases the keys of inline
// maps, so a template with labels or environment variables whose case
// matters belongs in spec_file. Forges come from the file only (no
// environment variables).
func (c ServeConfig) forgeConfigs() (map[string]dispatcher.ForgeConfig, error) {
	if len(c.Forges) == 0 {
		return nil, nil
	}
	out := make(map[string]dispatcher.ForgeConfig, len(c.Forges))
	for _, name := range slices.Sorted(maps.Keys(c.Forges)) {
		raw := maps.Clone(c.Forges[name])
		specFile, _ := raw["spec_file"].(string)
		delete(raw, "spec_file")
		if specFile != "" && raw["spec"] != nil {
			return nil, fmt.Errorf("forges.%s: set spec or spec_file, not both", name)
		}
		var f dispatcher.ForgeConfig
		if err := strictJSON(raw, &f); err != nil {
			return nil, fmt.Errorf("forges.%s: %v", name, err)
		}
		if specFile != "" {
			b, err := os.ReadFile(specFile)
			if err != nil {
				return nil, fmt.Errorf("forges.%s.spec_file: %v", name, err)
			}
			if err := decodeStrict(b, &f.Spec); err != nil {
				return nil, fmt.Errorf("forges.%s.spec_file %s: not a task spec: %v", name, specFile, err)
			}
		}
		out[name] = f
	}
	return out, nil
}

// strictJSON decodes v, a value read from the configuration, into out by
// out's JSON names, refusing keys out has not.
func strictJSON(v any, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return decodeStrict(b, out)
}

// decodeStrict decodes the JSON b into out, refusing keys out has not.
func decodeStrict(b []byte, out any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}
