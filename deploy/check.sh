#!/usr/bin/env bash
# Validates the deployment files without Docker or a cluster; `make
# deploy-check` runs it. Needs Go; promtool (Debian: apt-get install
# --no-install-recommends prometheus); npx (Debian: npm) for the optional
# Dockerfile lint.
#
#   1. Kubernetes manifests: kubeconform (from the Go module proxy) against
#      the schemas in deploy/kubernetes/schemas, strictly (unknown fields
#      fail). kubeconform's default schema catalogue is a web site this
#      project's machines cannot reach, so the core schemas are generated
#      from k8s.io/api (deploy/kubernetes/schemas/gen) and the CRD schemas
#      (KEDA ScaledObject, CloudNativePG Cluster) are written by hand.
#   2. Prometheus: promtool checks the alert rules and runs their unit
#      tests.
#   3. Compose file, Grafana dashboard, cross-file consistency (drain grace
#      vs termination grace, KEDA consumer name, metric names, runbook
#      links, AGENTFLEET_* variables are documented keys): go test ./deploy/.
#   4. Dockerfiles: dockerfilelint (npm) when npx is on PATH. hadolint is
#      not packaged in Debian, the Go module proxy or npm.
set -euo pipefail
cd "$(dirname "$0")/.."

KUBECONFORM_VERSION=${KUBECONFORM_VERSION:-v0.7.0}
DOCKERFILELINT_VERSION=${DOCKERFILELINT_VERSION:-1.8.0}
GO=${GO:-go}

step() { printf '\n== %s\n' "$*"; }

step "kubeconform $KUBECONFORM_VERSION: deploy/kubernetes"
manifests=()
for f in deploy/kubernetes/*.yaml deploy/kubernetes/postgres/*.yaml; do
	[[ $(basename "$f") == kustomization.yaml ]] || manifests+=("$f")
done
"$GO" run "github.com/yannh/kubeconform/cmd/kubeconform@$KUBECONFORM_VERSION" \
	-strict -summary -output text \
	-schema-location 'deploy/kubernetes/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json' \
	"${manifests[@]}"

step "promtool: deploy/prometheus"
if ! command -v promtool >/dev/null; then
	echo "promtool not found: install it (Debian: apt-get install --no-install-recommends prometheus)" >&2
	exit 1
fi
# Not `promtool check config prometheus.yaml`: Debian's build leaves out
# Kubernetes service discovery and rejects kubernetes_sd_configs.
promtool check rules deploy/prometheus/alerts.yaml
promtool test rules deploy/prometheus/alerts_test.yaml

step "go test ./deploy/ (compose, dashboard, consistency)"
"$GO" test -count=1 ./deploy/

step "Dockerfile lint"
if command -v npx >/dev/null; then
	npx --yes "dockerfilelint@$DOCKERFILELINT_VERSION" deploy/docker/Dockerfile.dispatcher deploy/docker/Dockerfile.worker
else
	echo "skipped: npx not found (Debian: apt-get install npm); hadolint is not available from the package registries"
fi
echo
echo "deploy-check: all checks passed"
