#!/usr/bin/env bash
# Writes .env next to compose.yaml with a random value for every secret
# compose.yaml needs (it refuses to start without them). An existing .env
# is never overwritten: only the secrets it lacks are appended (a newer
# compose.yaml may need more). The file is readable by its owner only.
# Print the API token afterwards with: grep AGENTFLEET_TOKEN .env
set -euo pipefail
cd "$(dirname "$0")"
rand() { head -c 32 /dev/urandom | base64 | tr -d '/+=\n' | head -c 40; }
umask 077
secrets=(AGENTFLEET_TOKEN POSTGRES_PASSWORD NATS_DISPATCHER_PASSWORD NATS_WORKER_PASSWORD
	NATS_OBSERVER_DEFAULT_PASSWORD NATS_SYS_PASSWORD)
if [[ -e .env ]]; then
	# Keep every value; add only the secrets a newer compose.yaml needs.
	added=0
	for name in "${secrets[@]}"; do
		if ! grep -q "^$name=" .env; then
			echo "$name=$(rand)" >>.env
			added=$((added + 1))
		fi
	done
	echo "init-secrets: .env exists; kept it, added $added missing secret(s)" >&2
	exit 0
fi
for name in "${secrets[@]}"; do
	echo "$name=$(rand)"
done >.env
echo "init-secrets: wrote $(pwd)/.env (mode 600)"
