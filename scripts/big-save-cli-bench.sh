#!/usr/bin/env bash
# The stasis CLI on a city-builder's 16 MB saves (issue 28): 1,000,000 agents of 16 bytes as a
# bulk array, a 512 × 512 byte grid and a ledger; ours and theirs each moved another 1 % of the
# agents since the base. Times dump, diff and merge, in text and --json, with and without
# --all-elements, on a release build, with /usr/bin/time -v: wall time, peak RSS, bytes printed.
# docs/PERFORMANCE.md keeps the figures. Usage: scripts/big-save-cli-bench.sh [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
folder="${1:-$(mktemp -d /tmp/stasis-big-saves.XXXXXX)}"
mkdir -p "$folder"

swift build -c release --product stasis --product stasis-bench
# The saves: SyntheticCity (StasisTesting), written by stasis-bench.
.build/release/stasis-bench --write-city-saves "$folder"
stasis="$PWD/.build/release/stasis"
cd "$folder"
ls -l base.stasis ours.stasis theirs.stasis

# measure LABEL EXPECTED-EXIT COMMAND...: one row of the table.
measure() {
  local label="$1" expected="$2"
  shift 2
  local status=0
  /usr/bin/time -v "$@" >stdout.txt 2>time.txt || status=$?
  if [ "$status" != "$expected" ]; then
    echo "$label: exit $status, expected $expected" >&2
    cat time.txt >&2
    exit 1
  fi
  local wall rss bytes
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' time.txt)
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' time.txt)
  bytes=$(wc -c <stdout.txt)
  printf '| `%s` | %s | %d MB | %s |\n' "$label" "$wall" $((rss / 1024)) "$bytes"
}

echo "| command (in $folder) | wall (m:ss) | max RSS | bytes printed |"
echo "| --- | ---: | ---: | ---: |"
measure "stasis dump ours.stasis" 0 "$stasis" dump ours.stasis
measure "stasis dump ours.stasis --all-elements" 0 "$stasis" dump ours.stasis --all-elements
measure "stasis diff base.stasis ours.stasis" 1 "$stasis" diff base.stasis ours.stasis
measure "stasis diff base.stasis ours.stasis --json" 1 "$stasis" diff base.stasis ours.stasis --json
measure "stasis diff base.stasis ours.stasis --json --all-elements" 1 \
  "$stasis" diff base.stasis ours.stasis --json --all-elements
measure "stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis --take theirs" 1 \
  "$stasis" merge base.stasis ours.stasis theirs.stasis -o merged.stasis --take theirs
measure "stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis --take theirs --json" 1 \
  "$stasis" merge base.stasis ours.stasis theirs.stasis -o merged.stasis --take theirs --json
measure "stasis merge base.stasis ours.stasis theirs.stasis -o merged.stasis --take theirs --json --all-elements" 1 \
  "$stasis" merge base.stasis ours.stasis theirs.stasis -o merged.stasis --take theirs --json --all-elements
rm -f stdout.txt time.txt
