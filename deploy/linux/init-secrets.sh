#!/usr/bin/env bash
# init-secrets.sh DIR [DATABASE_URL_BASE]: write the one-machine fleet's
# secrets into DIR (/etc/agentfleet), once: each component's file holds
# only what it needs (docs/operations.md, "One machine, no containers").
#   nats-secrets.env        the NATS users' passwords, for nats-server (the
#                           observer's goes to whoever watches tenant default)
#   dispatcher-secrets.env  its NATS password, the database URL, the API token
#   worker-secrets.env      its NATS password, the database URL
#   postgres-password       the agentfleet database user's password
# Files that exist are kept, so running it again changes nothing. The
# database URL is postgres://agentfleet:PASSWORD@DATABASE_URL_BASE
# (default 127.0.0.1:5432/agentfleet).
set -euo pipefail
dir=${1:?usage: init-secrets.sh DIR [DATABASE_URL_BASE]}
base=${2:-127.0.0.1:5432/agentfleet}
umask 077
mkdir -p "$dir"
rand() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
keep() { [ -s "$dir/$1" ] && echo "init-secrets: keeping $dir/$1" >&2; }

keep postgres-password || rand >"$dir/postgres-password"
db="postgres://agentfleet:$(cat "$dir/postgres-password")@$base"
if ! keep nats-secrets.env; then
	cat >"$dir/nats-secrets.env" <<EOT
NATS_DISPATCHER_PASSWORD=$(rand)
NATS_WORKER_PASSWORD=$(rand)
NATS_OBSERVER_DEFAULT_PASSWORD=$(rand)
NATS_SYS_PASSWORD=$(rand)
EOT
fi
pw() { sed -n "s/^$1=//p" "$dir/nats-secrets.env"; }
if ! keep dispatcher-secrets.env; then
	cat >"$dir/dispatcher-secrets.env" <<EOT
AGENTFLEET_NATS_PASSWORD=$(pw NATS_DISPATCHER_PASSWORD)
AGENTFLEET_DATABASE_URL=$db
AGENTFLEET_TOKEN=$(rand)
EOT
fi
if ! keep worker-secrets.env; then
	cat >"$dir/worker-secrets.env" <<EOT
AGENTFLEET_NATS_PASSWORD=$(pw NATS_WORKER_PASSWORD)
AGENTFLEET_DATABASE_URL=$db
EOT
fi
echo "init-secrets: secrets are in $dir"
