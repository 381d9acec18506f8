#!/usr/bin/env bash
# prod-try.sh: the fleet of docs/operations.md "One machine, no containers",
# brought up on loopback in a scratch directory from this directory's own
# files (nats.conf, the environment files, worker.yaml, init-secrets.sh,
# and the EnvironmentFile= and ExecStart= lines of the systemd units, run
# as the units would run them), fed a backlog of $TASKS (default 50)
# scripted tasks through the simulated provider, checked, and torn down.
# `make prod-try` runs it, and so does CI.
#
# Needs Go, git, bubblewrap, and Postgres's initdb and pg_ctl on PATH. As
# root, Postgres runs as the user postgres and the fleet as root (a root
# worker starts its sandboxes as unprivileged uids); the units run it all
# as the user agentfleet. KEEP=1 keeps the scratch directory (logs in
# log/). The ports are the documented ones: NATS 4222-4224, 6222-6224,
# 8222-8224, the API 8080, the workers 9091-9092, the simulated provider
# 8089; Postgres takes a free port.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=$root/deploy/linux
tasks=${TASKS:-50}
workers=2
work=$(mktemp -d /tmp/agentfleet-prod-try.XXXXXX)
chmod 755 "$work"
etc=$work/etc var=$work/var bin=$root/bin log=$work/log
mkdir -p "$etc" "$var" "$log"
pids=()
status=1

say() { printf '\nprod-try: %s\n' "$*"; }
as_postgres() {
	if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi
}
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	[ -d "$work/pg" ] && as_postgres "pg_ctl -D '$work/pg' -m fast stop" >/dev/null 2>&1 || true
	if [ "$status" != 0 ]; then
		for f in "$log"/*.log; do echo "--- $f (last lines)"; tail -n 25 "$f"; done
	fi
	if [ "${KEEP:-}" = 1 ]; then echo "prod-try: kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# run_unit UNIT INSTANCE: start what the systemd unit UNIT starts, with
# its environment files, the documented paths mapped into $work.
run_unit() {
	local unit=$kit/systemd/$1 inst=${2:-} name envs cmd f
	name=$(basename "$1" .service)${inst:+-$inst}
	map() { sed -e "s/%i/$inst/g" -e "s#/etc/agentfleet#$etc#g" -e "s#/usr/local/bin#$bin#g"; }
	envs=$(sed -n 's/^EnvironmentFile=//p' "$unit" | map)
	cmd=$(sed -n 's/^ExecStart=//p' "$unit" | map)
	(
		set -a
		for f in $envs; do . "$f"; done
		set +a
		exec $cmd
	) >"$log/$name.log" 2>&1 &
	pids+=($!)
}

# wait_http URL WHAT: wait up to two minutes for URL to answer 200.
wait_http() {
	for _ in $(seq 240); do
		curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	echo "prod-try: $2 did not come up ($1)" >&2
	return 1
}

free_port() {
	for p in $(seq 55440 55540); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
	done
	echo "prod-try: no free port for Postgres" >&2
	return 1
}

say "1. build the binaries and nats-server"
make -C "$root" --no-print-directory build nats-server

say "2. configuration (deploy/linux, with /var/lib/agentfleet as $var)"
cp "$kit"/nats.conf "$kit"/*.env "$etc"/
sed -i "s#/var/lib/agentfleet#$var#g" "$etc"/*.env
for n in $(seq "$workers"); do
	sed -e "s/worker-1/worker-$n/" -e "s/9091/909$n/" -e "s#/var/lib/agentfleet/workspaces-1#$var/workspaces-$n#" \
		"$kit/worker.yaml" >"$etc/worker-$n.yaml"
done
pgport=$(free_port)
"$kit/init-secrets.sh" "$etc" "127.0.0.1:$pgport/agentfleet"

say "3. Postgres (a cluster of its own on port $pgport)"
mkdir -p "$work/pg" "$work/pgrun"
cp "$etc/postgres-password" "$work/pgrun/password"
[ "$(id -u)" = 0 ] && chown -R postgres "$work/pg" "$work/pgrun"
as_postgres "initdb -D '$work/pg' -A scram-sha-256 -U postgres --pwfile='$work/pgrun/password' >'$work/pgrun/initdb.log'"
as_postgres "pg_ctl -D '$work/pg' -o \"-p $pgport -k '$work/pgrun' -c listen_addresses=127.0.0.1\" -l '$work/pgrun/server.log' -w start" >/dev/null
export PGPASSWORD; PGPASSWORD=$(cat "$etc/postgres-password")
psql -h 127.0.0.1 -p "$pgport" -U postgres -qc "CREATE ROLE agentfleet LOGIN PASSWORD '$PGPASSWORD'" -c "CREATE DATABASE agentfleet OWNER agentfleet"
unset PGPASSWORD

say "4. NATS: three nodes"
for n in 1 2 3; do run_unit agentfleet-nats@.service "$n"; done
for n in 1 2 3; do wait_http "http://127.0.0.1:822$((n + 1))/healthz?js-enabled-only=true" "nats-$n"; done

say "5. migrate the database"
(set -a; . "$etc/dispatcher-secrets.env"; set +a; "$bin/dispatcher" migrate up) >"$log/migrate.log" 2>&1

say "6. the simulated provider, the dispatcher and $workers workers"
run_unit agentfleet-simllm.service
run_unit agentfleet-dispatcher.service
for n in $(seq "$workers"); do run_unit agentfleet-worker@.service "$n"; done
wait_http http://127.0.0.1:8080/readyz dispatcher
for n in $(seq "$workers"); do wait_http "http://127.0.0.1:909$n/readyz" "worker-$n"; done

say "7. a backlog of $tasks tasks (each runs a command in its sandbox)"
for i in $(seq "$tasks"); do
	script='[{"calls":[{"name":"shell","args":{"command":"echo task-'$i' > proof.txt && cat proof.txt && id -u"}}]},{"text":"done: {{results}}"}]'
	printf '{"prompt":"prod-try task %s\\n#agentfleet-script %s"}\n' "$i" "${script//\"/\\\"}"
done >"$work/backlog.jsonl"

AGENTFLEET_TOKEN=$(sed -n 's/^AGENTFLEET_TOKEN=//p' "$etc/dispatcher-secrets.env")
export AGENTFLEET_TOKEN
"$bin/dispatcher" submit --server http://127.0.0.1:8080 --file "$work/backlog.jsonl"

say "8. check"
counts=$(curl -fsS -H "Authorization: Bearer $AGENTFLEET_TOKEN" http://127.0.0.1:8080/v1/counts)
echo "prod-try: counts $counts"
succeeded=$(echo "$counts" | grep -o '"succeeded": *[0-9]*' | grep -o '[0-9]*$' || echo 0)
if [ "$succeeded" != "$tasks" ]; then
	echo "prod-try: $succeeded of $tasks tasks succeeded" >&2
	exit 1
fi
# Each answer carries its command's output: the proof file written in the
# task's workspace and the sandbox's uid (1000, never the worker's).
proof=$(curl -fsS -H "Authorization: Bearer $AGENTFLEET_TOKEN" "http://127.0.0.1:8080/v1/tasks?limit=$tasks")
ran=$(echo "$proof" | { grep -o 'Output:\\ntask-[0-9]*\\n1000' || true; } | sort -u | wc -l)
if [ "$ran" != "$tasks" ]; then
	echo "prod-try: $ran of $tasks answers show their command's output from uid 1000:" >&2
	echo "${proof:0:1500}" >&2
	exit 1
fi
status=0
say "$tasks of $tasks tasks succeeded on 3 NATS nodes, Postgres and $workers sandboxed workers"
