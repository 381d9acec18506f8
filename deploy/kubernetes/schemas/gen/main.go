// Command gen writes the JSON Schemas that `make deploy-check` gives kubeconform
// for the Kubernetes kinds under deploy/kubernetes.
//
// kubeconform fetches its schemas from a public catalogue by default, which
// this project's machines and CI cannot reach. The schemas are therefore
// generated from the Go types of the Kubernetes API (k8s.io/api, the version
// pinned in this directory's go.mod) and committed next to this program. Run
// it again after bumping k8s.io/api:
//
//	cd deploy/kubernetes/schemas/gen && go run . ..
//
// The schemas are strict: every object rejects fields its Go type does not
// have (additionalProperties: false), so a typo such as `readinesProbe` or
// a field at the wrong level fails the check. Scalar types follow the json
// tags and the types' own OpenAPI hints (resource.Quantity and
// intstr.IntOrString accept a string or a number). Required fields are not
// known to the Go types (they live in comments), so only apiVersion, kind and
// metadata are required.
//
// The KEDA schemas (scaledobject-keda-v1alpha1.json,
// triggerauthentication-keda-v1alpha1.json) are written by hand and are not
// touched by this program.
//
// This directory is its own Go module so that k8s.io/api never enters the
// project's go.mod.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// kind is one Kubernetes kind to write a schema for.
type kind struct {
	apiVersion string // e.g. "apps/v1"
	kind       string // e.g. "Deployment"
	value      any    // a zero value of its Go type
}

var kinds = []kind{
	{"v1", "ConfigMap", corev1.ConfigMap{}},
	{"v1", "Secret", corev1.Secret{}},
	{"v1", "Service", corev1.Service{}},
	{"v1", "ServiceAccount", corev1.ServiceAccount{}},
	{"v1", "Namespace", corev1.Namespace{}},
	{"apps/v1", "Deployment", appsv1.Deployment{}},
	{"batch/v1", "Job", batchv1.Job{}},
	{"networking.k8s.io/v1", "NetworkPolicy", networkingv1.NetworkPolicy{}},
	{"policy/v1", "PodDisruptionBudget", policyv1.PodDisruptionBudget{}},
	{"rbac.authorization.k8s.io/v1", "Role", rbacv1.Role{}},
	{"rbac.authorization.k8s.io/v1", "RoleBinding", rbacv1.RoleBinding{}},
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen OUTPUT-DIR (the deploy/kubernetes/schemas directory)")
		os.Exit(2)
	}
	for _, k := range kinds {
		path := filepath.Join(os.Args[1], fileName(k.apiVersion, k.kind))
		if err := write(path, schemaOf(k)); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
}

// fileName follows kubeconform's {{ .ResourceKind }}{{ .KindSuffix }}.json:
// the lower-case kind, the first label of the group, the version.
func fileName(apiVersion, kind string) string {
	suffix := ""
	group, version, found := strings.Cut(apiVersion, "/")
	if !found {
		version, group = group, ""
	}
	if group != "" {
		suffix = "-" + strings.ToLower(strings.Split(group, ".")[0])
	}
	return strings.ToLower(kind) + suffix + "-" + version + ".json"
}

func write(path string, schema map[string]any) error {
	b, err := json.MarshalIndent(schema, "", " ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// schemaOf builds a standalone schema: the kind's object with every nested
// type in "definitions".
func schemaOf(k kind) map[string]any {
	g := &generator{defs: map[string]any{}}
	root := g.object(reflect.TypeOf(k.value))
	props := root["properties"].(map[string]any)
	props["apiVersion"] = map[string]any{"type": "string", "enum": []string{k.apiVersion}}
	props["kind"] = map[string]any{"type": "string", "enum": []string{k.kind}}
	root["required"] = []string{"apiVersion", "kind", "metadata"}
	root["$schema"] = "http://json-schema.org/draft-07/schema#"
	root["description"] = fmt.Sprintf("%s %s, generated from k8s.io/api by deploy/kubernetes/schemas/gen", k.apiVersion, k.kind)
	root["definitions"] = g.defs
	return root
}

// generator accumulates the definitions of one schema.
type generator struct{ defs map[string]any }

// openAPITyped is implemented by apimachinery types whose JSON form is not
// their Go shape (Quantity, IntOrString, Time).
type openAPITyped interface{ OpenAPISchemaType() []string }

var (
	openAPITypedType = reflect.TypeOf((*openAPITyped)(nil)).Elem()
	marshalerType    = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// schema returns the schema of t, as a $ref for named struct types.
func (g *generator) schema(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := customSchema(t); ok {
		return s
	}
	switch t.Kind() {
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string"} // []byte is base64
		}
		return map[string]any{"type": []string{"array", "null"}, "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": []string{"object", "null"}, "additionalProperties": g.schema(t.Elem())}
	case reflect.Struct:
		name := defName(t)
		if _, seen := g.defs[name]; !seen {
			g.defs[name] = true // placeholder against recursion
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/definitions/" + name}
	default: // interfaces and anything else: any JSON value
		return map[string]any{}
	}
}

// customSchema handles types that marshal themselves.
func customSchema(t reflect.Type) (map[string]any, bool) {
	if reflect.PointerTo(t).Implements(openAPITypedType) || t.Implements(openAPITypedType) {
		v := reflect.New(t).Interface().(openAPITyped)
		types := v.OpenAPISchemaType()
		if t.Name() == "IntOrString" || t.Name() == "Quantity" {
			// Both accept a number or a string in manifests.
			types = []string{"string", "integer", "number"}
		}
		return map[string]any{"type": types}, true
	}
	if reflect.PointerTo(t).Implements(marshalerType) || t.Implements(marshalerType) {
		return map[string]any{}, true
	}
	return nil, false
}

// object builds the schema of a struct: its json fields, embedded ones
// flattened, and nothing else allowed.
func (g *generator) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	g.fields(t, props)
	return map[string]any{"type": []string{"object", "null"}, "properties": props, "additionalProperties": false}
}

func (g *generator) fields(t reflect.Type, props map[string]any) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			g.fields(ft, props)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
	}
}

// defName is a stable definition key, e.g. "io.k8s.api.core.v1.PodSpec".
func defName(t reflect.Type) string {
	pkg := strings.TrimPrefix(t.PkgPath(), "k8s.io/")
	return "io.k8s." + strings.ReplaceAll(pkg, "/", ".") + "." + t.Name()
}
