#!/usr/bin/env bash
# Builds the Gitea the delivery integration test (fleet/delivery,
# TestGiteaPullRequest) and the single sign-on test (internal/oidcauth,
# through internal/giteatest) run, from the Go module proxy, into a cache directory,
# when it is not there yet: its source is copied out of the module cache
# (read-only there) and built with SQLite. About 7 minutes on two cores;
# nothing of Gitea is committed to this repository.
#
#   GITEA_VERSION  default v1.24.0
#   GITEA_DIR      default ${XDG_CACHE_HOME:-$HOME/.cache}/agentfleet/gitea
#
# It leaves $GITEA_DIR/src (the source tree, which the test passes as
# STATIC_ROOT_PATH) and $GITEA_DIR/gitea (the binary) and prints the
# binary's path. The test finds them through AGENTFLEET_GITEA_DIR or the
# same default.
set -euo pipefail
version="${GITEA_VERSION:-v1.24.0}"
dir="${GITEA_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentfleet/gitea}"
if [[ -x "$dir/gitea" && -f "$dir/version" && "$(cat "$dir/version")" == "$version" ]]; then
	echo "$dir/gitea"
	exit 0
fi
mkdir -p "$dir"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# A module outside any main module: download needs a go.mod-less directory.
mod="$(cd "$tmp" && GOFLAGS=-mod=mod go mod download -json "code.gitea.io/gitea@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
if [[ -z "$mod" ]]; then
	echo "gitea.sh: go mod download gave no directory for code.gitea.io/gitea@$version" >&2
	exit 1
fi
rm -rf "$dir/src"
cp -r "$mod" "$dir/src"
chmod -R u+w "$dir/src"
cd "$dir/src"
# The module's own go.mod pins its dependencies; build the server binary
# with SQLite and without the web assets' build (the test serves none).
CGO_ENABLED=1 go build -trimpath -tags 'sqlite sqlite_unlock_notify' -ldflags "-X main.Version=${version#v}" -o "$dir/gitea.tmp" .
mv "$dir/gitea.tmp" "$dir/gitea"
echo "$version" >"$dir/version"
echo "$dir/gitea"
