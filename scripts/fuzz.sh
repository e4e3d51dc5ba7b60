#!/usr/bin/env bash
# Fuzzes the save decoder with libFuzzer and AddressSanitizer, seeded with real saves.
#   scripts/fuzz.sh            a bounded run (45 s of bytes, then 30 s structure-aware), as CI does
#   scripts/fuzz.sh 3600       an hour of bytes (and half as long structure-aware)
#   scripts/fuzz.sh --build-only   builds the two fuzzers, runs nothing (scripts/test.sh builds
#                                  them while the simulation runs)
# Crashes land in Tests/StasisTests/Fixtures/fuzz-crashes/; commit them: the test suite
# replays that folder (FuzzRegressionTests).
set -euo pipefail
cd "$(dirname "$0")/.."
# The build goes to .build-fuzz, so a fuzzing run leaves your release build alone;
# STASIS_FUZZ_SCRATCH=.build shares it (scripts/test.sh does: the C parts, BoringSSL above all,
# compile with the same flags as the release demo's and are not compiled again).
scratch="${STASIS_FUZZ_SCRATCH:-.build-fuzz}"
for product in stasis-fuzz stasis-fuzz-state; do
  swift build --scratch-path "$scratch" -c release --product "$product" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING >/dev/null
done
[ "${1:-}" = "--build-only" ] && exit 0
seconds="${1:-45}"
state_seconds="${2:-$(( (seconds + 1) * 2 / 3 ))}"
corpus=$(mktemp -d)
seeds=$(mktemp -d)
# Seeds: real demo saves (whole files, mode byte 0) and the committed fixture, from the demo
# STASIS_DEMO names (scripts/test.sh gives the release one it built), else a debug build of it.
demo="${STASIS_DEMO:-}"
if [ -z "$demo" ]; then
  swift build --product stasis-demo >/dev/null
  demo=.build/debug/stasis-demo
fi
"$demo" --headless --level 2 --frames 120 --autosave 0.5 --saves "$seeds" >/dev/null
n=0
for f in "$seeds"/autosave/*.stasis Tests/StasisTests/Fixtures/*.stasis; do
  n=$((n + 1)); { printf '\x00'; cat "$f"; } > "$corpus/seed-$n"
done
crashes=Tests/StasisTests/Fixtures/fuzz-crashes
mkdir -p "$crashes"
"$scratch/release/stasis-fuzz" "$corpus" -max_total_time="$seconds" -max_len=65536 \
  -artifact_prefix="$crashes/" -print_final_stats=1 2>&1 | tee /tmp/stasis-fuzz.log | grep -E "^(stat::|#[0-9]+ +DONE|INFO: Seed|==[0-9]+==ERROR)" || true
grep -q "stat::number_of_executed_units" /tmp/stasis-fuzz.log
! grep -q "ERROR: AddressSanitizer\|ERROR: libFuzzer\|deadly signal" /tmp/stasis-fuzz.log

# Structure-aware: value edits to real demo saves (not bytes), each loaded, restored, stepped
# 60 times and drawn; libFuzzer's -timeout turns a hang into a reported crash.
state_corpus=$(mktemp -d)
cp Tests/StasisTests/Fixtures/state-fuzz-corpus/* "$state_corpus"/
state_crashes=Tests/StasisTests/Fixtures/fuzz-crashes-state
mkdir -p "$state_crashes"
# Leak checks off for this one: its seed saves live in a global for the whole run, which
# LeakSanitizer counts as leaked at exit; the byte-level run above keeps them on.
ASAN_OPTIONS=detect_leaks=0 "$scratch/release/stasis-fuzz-state" "$state_corpus" -max_total_time="$state_seconds" \
  -max_len=600 -timeout=20 -detect_leaks=0 \
  -artifact_prefix="$state_crashes/" -print_final_stats=1 2>&1 | tee /tmp/stasis-fuzz-state.log \
  | grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ +DONE|==[0-9]+==ERROR)" || true
grep -q "stat::number_of_executed_units" /tmp/stasis-fuzz-state.log
! grep -q "ERROR: AddressSanitizer\|ERROR: libFuzzer\|deadly signal\|Fatal error" /tmp/stasis-fuzz-state.log
