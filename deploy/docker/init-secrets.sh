#!/usr/bin/env bash
# Writes .env next to compose.yaml with a random value for every secret
# compose.yaml needs (it refuses to start without them), unless .env
# exists: it never overwrites one. The file is readable by its owner only.
# Print the API token afterwards with: grep AGENTFLEET_TOKEN .env
set -euo pipefail
cd "$(dirname "$0")"
if [[ -e .env ]]; then
	echo "init-secrets: .env exists; keeping it" >&2
	exit 0
fi
rand() { head -c 32 /dev/urandom | base64 | tr -d '/+=\n' | head -c 40; }
umask 077
{
	echo "AGENTFLEET_TOKEN=$(rand)"
	echo "POSTGRES_PASSWORD=$(rand)"
	echo "NATS_DISPATCHER_PASSWORD=$(rand)"
	echo "NATS_WORKER_PASSWORD=$(rand)"
	echo "NATS_SYS_PASSWORD=$(rand)"
} >.env
echo "init-secrets: wrote $(pwd)/.env (mode 600)"
