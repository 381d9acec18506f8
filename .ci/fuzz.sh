#!/usr/bin/env bash
# Runs every fuzzer of the module (func FuzzXxx in a _test.go file) for
# FUZZTIME each (default 20s), one at a time, and stops at the first
# failure, naming the fuzzer. A failure leaves its input under the
# package's testdata/fuzz/FuzzXxx/: commit it as a regression seed once
# fixed. `make fuzz` runs this; CI too.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-20s}"
# Minimizing a new interesting input of several KB (a recorded stream) can
# take the whole FUZZTIME; keep it short so that the time goes to fuzzing.
MINIMIZE="${FUZZMINIMIZETIME:-1s}"

# fuzz PKG NAME runs one fuzzer. Go before 1.27 can end a duration-bound
# run with a bare "context deadline exceeded" and no failing input: a race
# in its fuzzing coordinator at the -fuzztime boundary (golang/go#75804),
# seen here on a loaded machine. Such a run is made again, up to three
# times in all; any other failure, or one that left an input, is reported.
fuzz() {
	local pkg=$1 name=$2 out
	for attempt in 1 2 3; do
		out=$(mktemp)
		if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZE" "$pkg" 2>&1 | tee "$out"; then
			rm -f "$out"
			return 0
		fi
		if [ "$attempt" -lt 3 ] && grep -q '^    context deadline exceeded$' "$out" &&
			[ -z "$(git status --porcelain -- "$pkg/testdata/fuzz/$name")" ]; then
			echo "fuzz: $name stopped at its time limit with no failing input (golang/go#75804); again" >&2
			rm -f "$out"
			continue
		fi
		rm -f "$out"
		return 1
	done
}

found=0
while IFS= read -r file; do
	pkg="./$(dirname "$file")"
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		found=$((found + 1))
		echo "fuzz: $pkg $name for $FUZZTIME"
		if ! fuzz "$pkg" "$name"; then
			echo "fuzz: $name in $pkg failed; its input is in $pkg/testdata/fuzz/$name/" >&2
			exit 1
		fi
	done
done < <(git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | sort)

if [ "$found" -eq 0 ]; then
	echo "fuzz: no fuzzers found" >&2
	exit 1
fi
echo "fuzz: $found fuzzers passed"
