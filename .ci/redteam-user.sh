#!/usr/bin/env bash
# Runs the red-team suite (bin/redteam, built by `make redteam` as root)
# as an unprivileged user, created when absent, with a subordinate uid
# range: what a worker outside a container runs as. Before it, the same
# user runs the sandbox tests that only a worker that is not root can
# run (TestSubordinateUIDsSeparateTasks skips as root, and so in make
# test), with AGENTFLEET_REQUIRE_INTEGRATION=1 so a missing range fails. The user gets a copy of the binary, a home and a
# temporary directory of its own, and no write access to the Go caches.
set -euo pipefail
cd "$(dirname "$0")/.."

user=${REDTEAM_USER:-agentfleet-redteam}
id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
# A subordinate uid range (useradd gives one where login.defs says so):
# the worker gives each task tree a uid of it (docs/operations.md, "Users").
grep -q "^$user:" /etc/subuid 2>/dev/null || usermod --add-subuids 1000000-1065535 "$user"
grep -q "^$user:" /etc/subgid 2>/dev/null || usermod --add-subgids 1000000-1065535 "$user"
command -v newuidmap >/dev/null || { echo "redteam-user: newuidmap is missing: apt-get install uidmap" >&2; exit 1; }
home=$(getent passwd "$user" | cut -d: -f6)
dir=$(mktemp -d -t agentfleet-redteam-user-XXXXXX)
trap 'rm -rf "$dir"' EXIT
install -m 0755 bin/redteam "$dir/redteam"
go test -c -o "$dir/sandbox.test" ./execenv/sandbox
install -d -o "$user" -g "$user" -m 0700 "$dir/tmp"
# The sandbox test's own temporary directory: its second task, shown this
# directory, must be able to start to prove it reads nothing of the first.
install -d -o "$user" -g "$user" -m 0711 "$dir/gotmp"
chmod 0755 "$dir"
cd "$dir"
as_user() {
	local tmp=$1
	shift
	setpriv --reuid="$user" --regid="$user" --init-groups \
		env -i HOME="$home" USER="$user" TMPDIR="$tmp" PATH="$PATH" LANG=C.UTF-8 \
		AGENTFLEET_REQUIRE_INTEGRATION=1 "$@"
}
# The test skips when it runs as root: make sure it ran, and passed, here.
as_user "$dir/gotmp" "$dir/sandbox.test" -test.count=1 -test.v -test.run '^TestSubordinateUIDsSeparateTasks$' | tee "$dir/subuid.out"
grep -q -- '--- PASS: TestSubordinateUIDsSeparateTasks' "$dir/subuid.out" || {
	echo "redteam-user: TestSubordinateUIDsSeparateTasks did not pass as $user (skipped?)" >&2
	exit 1
}
as_user "$dir/tmp" "$dir/redteam" "$@"
