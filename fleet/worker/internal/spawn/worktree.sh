# worktree.sh: the git of subagent worktrees (package doc: "Worktrees").
# Run by sh in the parent's working directory, in the parent's
# environment, with MODE (spawn or merge) and KEY (the child's worktree
# key) set. spawn makes the child's worktree when it has none (a new
# child, or one reopened after its merge); exit 3: not the top of a git
# work tree (the child shares the parent's).
set -eu
export GIT_AUTHOR_NAME=agentfleet GIT_AUTHOR_EMAIL=agentfleet@localhost \
	GIT_COMMITTER_NAME=agentfleet GIT_COMMITTER_EMAIL=agentfleet@localhost \
	GIT_TERMINAL_PROMPT=0 GIT_OPTIONAL_LOCKS=0 LC_ALL=C
g() {
	git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c gc.auto=0 \
		-c maintenance.auto=false -c diff.external= "$@"
}
dir=.agentfleet-worktrees
wt=$dir/$KEY
br=agentfleet/$KEY
baseref=refs/agentfleet/base/$KEY

# exclude keeps the worktrees out of the repository's files: out of
# `git status`, `git add` and the snapshots below.
exclude() {
	common=$(g rev-parse --path-format=absolute --git-common-dir)
	mkdir -p "$common/info"
	grep -qxF "/$dir/" "$common/info/exclude" 2>/dev/null ||
		printf '/%s/\n' "$dir" >>"$common/info/exclude"
}

# snap DIR INDEX prints the tree of DIR's files as `git add --all` sees
# them, building it in the index file INDEX, a copy of DIR's own index:
# neither that index nor HEAD changes.
snap() {
	real=$(cd "$1" && g rev-parse --path-format=absolute --git-path index)
	if [ -f "$real" ]; then cp "$real" "$2"; else rm -f "$2"; fi
	(cd "$1" && GIT_INDEX_FILE=$2 g add --all -- . && GIT_INDEX_FILE=$2 g write-tree)
}

spawn() {
	prefix=$(g rev-parse --show-prefix 2>/dev/null) || exit 3
	[ -z "$prefix" ] || exit 3
	[ ! -e "$wt/.git" ] || exit 0 # made by an earlier run of this spawn
	exclude
	if kept=$(g rev-parse -q --verify "refs/heads/$br^{commit}"); then
		# A child reopened while its work is kept on its branch (a
		# conflict), or a spawn cut short: it goes on from the branch.
		base=$(g rev-parse -q --verify "$baseref") || base=$(g rev-parse "$kept^")
		g update-ref "$baseref" "$base"
		g worktree prune
		mkdir -p "$dir"
		g worktree add --quiet "$wt" "$br"
		return
	fi
	idx=$(mktemp)
	tree=$(snap . "$idx")
	rm -f "$idx"
	if head=$(g rev-parse -q --verify 'HEAD^{commit}'); then
		base=$(g commit-tree -p "$head" -m "agentfleet: the tree subagent $KEY started from" "$tree")
	else
		base=$(g commit-tree -m "agentfleet: the tree subagent $KEY started from" "$tree")
	fi
	g update-ref "$baseref" "$base"
	g worktree prune
	mkdir -p "$dir"
	g worktree add --quiet -B "$br" "$wt" "$base"
}

# merge prints "none" (nothing to merge), "orphan" (files but no
# worktree), "merged" and the files it changed, or "conflict" and the
# files in conflict. An untouched worktree merges as nothing and is
# removed.
merge() {
	exclude
	if base=$(g rev-parse -q --verify "$baseref"); then
		if [ -e "$wt/.git" ]; then
			idx=$(mktemp)
			tree=$(snap "$wt" "$idx")
			rm -f "$idx"
			theirs=$(g commit-tree -p "$base" -m "agentfleet: the work of subagent $KEY" "$tree")
			g update-ref "refs/heads/$br" "$theirs"
			g worktree remove --force --force "$wt" 2>/dev/null || { rm -rf "$wt"; g worktree prune; }
			rmdir "$dir" 2>/dev/null || true
		fi
		g update-ref -d "$baseref"
	fi
	if ! theirs=$(g rev-parse -q --verify "refs/heads/$br^{commit}"); then
		# Merged already, unless files are in a directory that is no
		# longer a worktree (removed by hand while the child ran).
		if [ -d "$wt" ] && [ -n "$(ls -A "$wt")" ]; then echo orphan; else echo none; fi
		exit 0
	fi
	base=$(g rev-parse "$theirs^")
	idx=$(mktemp)
	ours_tree=$(snap . "$idx")
	ours=$(g commit-tree -p "$base" -m "agentfleet: the parent's tree" "$ours_tree")
	if out=$(g merge-tree --write-tree --name-only --no-messages "$ours" "$theirs"); then
		merged=$(printf '%s\n' "$out" | head -n 1)
		files=$(g diff --name-only --no-renames "$ours_tree" "$merged")
		GIT_INDEX_FILE=$idx g read-tree -m -u "$ours_tree" "$merged"
		rm -f "$idx"
		g update-ref -d "refs/heads/$br"
		echo merged
		[ -z "$files" ] || printf '%s\n' "$files"
	else
		status=$?
		rm -f "$idx"
		[ "$status" -eq 1 ] || exit "$status"
		echo conflict
		printf '%s\n' "$out" | sed 1d
	fi
}

case $MODE in
spawn) spawn ;;
merge) merge ;;
*) echo "unknown MODE $MODE" >&2; exit 2 ;;
esac
