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

found=0
while IFS= read -r file; do
	pkg="./$(dirname "$file")"
	for name in $(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file"); do
		found=$((found + 1))
		echo "fuzz: $pkg $name for $FUZZTIME"
		if ! go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$MINIMIZE" "$pkg"; then
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
