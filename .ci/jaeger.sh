#!/usr/bin/env bash
# Builds the Jaeger the tracing integration test runs (internal/tracing/
# jaegertest, TestJaegerTrace) from the Go module proxy, into a cache
# directory, when it is not there yet: its source is copied out of the module
# cache (read-only there; its go.mod has replace directives, so `go install
# module@version` refuses it) and cmd/jaeger, the all-in-one binary with an
# OTLP receiver, in-memory storage and the HTTP query API, is built. Nothing
# of Jaeger is committed to this repository.
#
#   JAEGER_VERSION  default v1.76.0
#   JAEGER_DIR      default ${XDG_CACHE_HOME:-$HOME/.cache}/agentfleet/jaeger
#
# It leaves $JAEGER_DIR/jaeger (the binary) and prints its path. The test
# finds it through AGENTFLEET_JAEGER_DIR or the same default.
set -euo pipefail
version="${JAEGER_VERSION:-v1.76.0}"
dir="${JAEGER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentfleet/jaeger}"
if [[ -x "$dir/jaeger" && -f "$dir/version" && "$(cat "$dir/version")" == "$version" ]]; then
	echo "$dir/jaeger"
	exit 0
fi
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A module outside any main module: download needs a go.mod-less directory.
mod="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "github.com/jaegertracing/jaeger@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$mod" ]]; then
	echo "jaeger.sh: go mod download gave no directory for github.com/jaegertracing/jaeger@$version" >&2
	exit 1
fi
rm -rf "$dir/src"
cp -r "$mod" "$dir/src"
chmod -R u+w "$dir/src"
cd "$dir/src"
# The module's own go.mod pins its dependencies (and its replace directives apply here).
CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$dir/jaeger.tmp" ./cmd/jaeger
mv "$dir/jaeger.tmp" "$dir/jaeger"
rm -rf "$dir/src"
echo "$version" >"$dir/version"
echo "$dir/jaeger"
