# store.sh: the workspace's side of the fleet git store (package doc:
# "Across machines"). Run by sh in the task's working directory, in its
# environment (its sandbox), with MODE set. Bundles pass through files in
# the repository's git directory, which the worker reads and writes
# beneath the workspace: agentfleet-out.bundle (made here) and
# agentfleet-in.bundle (given here). Exit 3: not the top of a git work
# tree with a .git directory.
set -eu
export GIT_AUTHOR_NAME=agentfleet GIT_AUTHOR_EMAIL=agentfleet@localhost \
	GIT_COMMITTER_NAME=agentfleet GIT_COMMITTER_EMAIL=agentfleet@localhost \
	GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0 LC_ALL=C
g() {
	git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c gc.auto=0 \
		-c maintenance.auto=false -c diff.external= "$@"
}
marker=.git/agentfleet-store
out=.git/agentfleet-out.bundle
in=.git/agentfleet-in.bundle

top() {
	prefix=$(g rev-parse --show-prefix 2>/dev/null) || exit 3
	[ -z "$prefix" ] && [ -d .git ] || exit 3
	# The worktrees of pinned children stay out of snapshots.
	common=$(g rev-parse --path-format=absolute --git-common-dir)
	mkdir -p "$common/info"
	grep -qxF "/.agentfleet-worktrees/" "$common/info/exclude" 2>/dev/null ||
		printf '/.agentfleet-worktrees/\n' >>"$common/info/exclude"
}

# snap: the working tree as `git add --all` sees it (built in a copy of
# the index: neither it nor HEAD changes) becomes a commit on BASE (""
# for HEAD, none in a repository without commits), kept as REF, bundled
# into $out without the objects of the commits in HAVES the repository
# has. Prints the commit, then "bundle" or "none" (nothing new to send).
snap() {
	top
	idx=$(mktemp)
	real=$(g rev-parse --path-format=absolute --git-path index)
	if [ -f "$real" ]; then cp "$real" "$idx"; else rm -f "$idx"; fi
	GIT_INDEX_FILE=$idx g add --all -- .
	tree=$(GIT_INDEX_FILE=$idx g write-tree)
	rm -f "$idx"
	parent=${BASE:-}
	[ -n "$parent" ] || parent=$(g rev-parse -q --verify 'HEAD^{commit}') || parent=
	if [ -n "$parent" ]; then
		c=$(g commit-tree -p "$parent" -m "agentfleet: $WHAT" "$tree")
	else
		c=$(g commit-tree -m "agentfleet: $WHAT" "$tree")
	fi
	g update-ref "$REF" "$c"
	g update-ref refs/agentfleet/out "$c"
	not=
	for h in ${HAVES:-}; do
		if g cat-file -e "$h^{commit}" 2>/dev/null; then not="$not ^$h"; fi
	done
	rm -f "$out"
	echo "$c"
	# shellcheck disable=SC2086 # $not is a list of ^commits
	if [ -n "$(g rev-list -n 1 refs/agentfleet/out $not)" ]; then
		g bundle create -q "$out" refs/agentfleet/out $not
		echo bundle
	else
		echo none
	fi
	echo "$c" >"$marker"
}

# head prints HEAD's commit, or nothing without one. A directory that is
# no repository yet becomes an empty one.
head() {
	[ -e .git ] || g init -q
	top
	g rev-parse -q --verify 'HEAD^{commit}' || true
}

# load takes the objects of $in (a bundle of WANT) and then: AS=start
# checks WANT out on branch agentfleet/work (a subagent's first files);
# AS=restore makes the files WANT's and HEAD WANT's parent, the index
# HEAD's (a task's pushed state back, as it was: its changes uncommitted);
# AS=branch keeps WANT as branch agentfleet/KEY for worktree.sh's merge
# unless it was fetched before (a merge may have consumed that branch).
load() {
	top
	if [ -s "$in" ]; then
		g bundle unbundle "$in" >/dev/null
		rm -f "$in"
	fi
	g cat-file -e "$WANT^{commit}"
	case $AS in
	start)
		g checkout -q -f -B agentfleet/work "$WANT"
		g clean -q -f -d
		;;
	restore)
		if p=$(g rev-parse -q --verify "$WANT^"); then
			g update-ref HEAD "$p"
			g read-tree --reset -u "$WANT"
			g reset -q
		else
			g read-tree --reset -u "$WANT"
			g read-tree --empty
		fi
		;;
	branch)
		if [ "$(g rev-parse -q --verify "refs/agentfleet/fetched/$KEY" || true)" != "$WANT" ]; then
			g update-ref "refs/heads/agentfleet/$KEY" "$WANT"
			g update-ref "refs/agentfleet/fetched/$KEY" "$WANT"
		fi
		return
		;;
	esac
	echo "$WANT" >"$marker"
}

# fetched prints the commit of KEY's work fetched before, if any.
fetched() {
	top
	g rev-parse -q --verify "refs/agentfleet/fetched/$KEY" || true
}

# marked exits 0 when this workspace holds the task's live files (a
# snapshot was pushed from it or it was loaded), 1 when it is new.
marked() {
	[ -f "$marker" ] || exit 1
}

case $MODE in
snap) snap ;;
head) head ;;
load) load ;;
fetched) fetched ;;
marked) marked ;;
*) echo "unknown MODE $MODE" >&2; exit 2 ;;
esac
