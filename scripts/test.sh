#!/usr/bin/env bash
# Every test: installs what is missing, builds, lints, and runs the whole suite headless.
set -euo pipefail
cd "$(dirname "$0")/.."
# Two packages: the library, the demo and the CLI at the root; the save server, its load tool
# and stasis-sim in Server/ (it depends on the root by path). Each stage prints its time.
# Every package here builds into the root's .build (`--scratch-path`): the packages they share
# (SwiftNIO, swift-crypto, GRDB, …, pinned to the same versions) are compiled once, not once per
# package. Only what differs is compiled again: the library with another set of traits.
scratch="$PWD/.build"
stage_start=$SECONDS
stage_name=""
stage() {
  [ -n "$stage_name" ] && echo "== $stage_name: $((SECONDS - stage_start)) s"
  stage_name="$1"
  stage_start=$SECONDS
  [ -n "$1" ] && echo "== $1"
  return 0
}
# A test process that crashes prints where: the Swift runtime's backtracer, not just "signal 11".
export SWIFT_BACKTRACE="enable=yes,interactive=no"
stage "install what is missing (Debian packages, PostgreSQL, schemathesis)"
scripts/install-deps.sh
# The server tests run against PostgreSQL for real (never skipped) and schemathesis from PyPI.
export STASIS_TEST_POSTGRES_URL="$(scripts/postgres.sh)"
# schemathesis: the one on PATH, else a virtual environment in .venv-schemathesis/ (git ignores
# it), made with Debian's python3-venv or any other Python's venv; never a system-wide install.
if ! command -v schemathesis >/dev/null; then
  venv=.venv-schemathesis
  if [ ! -x "$venv/bin/schemathesis" ]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install -q --disable-pip-version-check schemathesis
  fi
  export PATH="$PWD/$venv/bin:$PATH"
fi
schemathesis --version  # fails the run here, rather than skipping the API's conformance tests
# Playwright (PyPI) drives Debian's Chromium for the studio console's test, from the same
# environment (it uses /usr/bin/chromium: no browser download).
venv=.venv-schemathesis
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import playwright" 2>/dev/null; then
  "$venv/bin/python" -m pip install -q --disable-pip-version-check playwright
fi
"$venv/bin/python" -m playwright --version  # fails the run here, rather than skipping the browser test
export SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy
stage "swift format lint"
swift format lint --strict -r Sources Demo Tests Examples Package.swift Server/Sources Server/Tests Server/Package.swift
stage "nothing of the simulation ships; docs/ARCHITECTURE.md names every target and folder"
python3 scripts/check-planted-bugs.py
python3 scripts/check-architecture.py
stage "the stasis CLI needs only Stasis"
swift package describe --type json | python3 scripts/check-cli-closure.py
stage "a game on Stasis alone: at most 4 packages (Examples/OneFileGame, traits: [])"
(
  cd Examples/OneFileGame
  rm -f Package.resolved
  swift package resolve --scratch-path "$scratch"
  pins=$(grep -c '"identity"' Package.resolved)
  echo "a game on Stasis alone resolves $pins packages"
  [ "$pins" -le 4 ] || { echo "more than 4 packages: $(grep '"identity"' Package.resolved)"; exit 1; }
  swift build --scratch-path "$scratch"
  "$scratch/debug/OneFileGame" "$(mktemp -d)"
)
stage "a game beside other packages' CSDL2, CZstd, CXXHash, CLibNotify, TestSupport, … (Examples/BesideOtherBindings)"
# SwiftPM refuses a graph where two packages declare one target name: this game builds only while
# every Stasis target carries the package's prefix. It polls its own SDL binding and maps the
# events through StasisSDL by SDL's raw numbers.
# It syncs (`traits: ["Cloud"]`, over URLSession): at most 6 packages.
(
  cd Examples/BesideOtherBindings
  rm -f Package.resolved
  swift package resolve --scratch-path "$scratch"
  pins=$(grep -c '"identity"' Package.resolved)
  echo "a game on Stasis with Cloud resolves $pins packages (its local bindings package is not pinned)"
  [ "$pins" -le 6 ] || { echo "more than 6 packages: $(grep '"identity"' Package.resolved)"; exit 1; }
  swift build --scratch-path "$scratch"
  out=$("$scratch/debug/BesideOtherBindings")
  echo "$out"
  [ "$(echo "$out" | grep -c '^transition: ')" -eq 2 ] || { echo "the other binding's events did not map"; exit 1; }
  echo "$out" | grep -q '^cloud: offline, never sent: true$' || { echo "URLSession's refusal was not offline"; exit 1; }
)
stage "a game in Swift 5 mode, as Getting started shows it (Examples/SwiftFiveGame)"
# Its manifest and main loop are the guide's blocks: built in Swift 5 language mode, and run.
(
  cd Examples/SwiftFiveGame
  swift build --scratch-path "$scratch"
  out=$("$scratch/debug/SwiftFiveGame" "$(mktemp -d)")
  echo "$out"
  echo "$out" | grep -q "frame 610, score 6100" || { echo "the Swift 5 game did not run to its end"; exit 1; }
)
stage "build"
swift build --build-tests
# The end-to-end runs of the stress level take seconds in release and minutes in debug. They
# need no network: built without the Cloud trait, the release build compiles no HTTP client.
# (SwiftPM rewrites Package.resolved for the traits it builds with: the tested one is put back.)
cp Package.resolved .build/Package.resolved.tested
swift build -c release --product stasis-demo --disable-default-traits
cp .build/Package.resolved.tested Package.resolved
stage "a game written against 0.10.0 builds with deprecation warnings only (Examples/Compat)"
scripts/compat.sh | tail -1
stage "documentation (DocC, warnings are errors)"
scripts/docs.sh 2>&1 | tail -40   # public symbols per library, the names and links checked, each failure (file:line); a failure or a DocC warning fails the run
stage "swift test"
STASIS_USE_RELEASE=1 swift test --skip-build
stage "build Server/ as a studio does (no trait): it builds, and holds nothing of the simulation"
# Without the trait, the library's objects are the root's build's (the same traits): only the
# server's own dependencies and targets compile here, and the trait build below reuses those.
# The simulation's library is compiled too: a trait build never compiles its other branch.
swift build --package-path Server --scratch-path "$scratch" --product stasis-server
swift build --package-path Server --scratch-path "$scratch" --target StasisSimulation
scripts/check-no-planted-bugs.sh .build/debug/stasis-server
stage "build Server/ (with the SimulationSeams trait: the simulation's build)"
# The server's tests also run the CLI and the demo: the root's builds above (built once).
# Server/ is built and tested with the SimulationSeams trait, which compiles the seams by which
# stasis-sim varies the rules of the library and the server to plant the bugs of its catalogue;
# the root's builds above have none. The symbols prove it: the simulation's binary holds them
# (the control), the games' binaries none. (Server/ builds into the root's .build, so the
# library's objects there are the trait's from here on: nothing below builds the root again.)
server=(--package-path Server --scratch-path "$scratch" --traits SimulationSeams)
swift build "${server[@]}" --build-tests
scripts/check-no-planted-bugs.sh --control .build/debug/stasis-sim \
  .build/release/stasis-demo .build/debug/stasis-demo .build/debug/stasis
stage "swift test, Server/"
# The descriptor flood (thousands of sockets) and the simulation (servers opened and crashed
# in-process) each run in a test process of their own: libdispatch in a process shared with
# the other suites' pipes and sockets was seen to crash once under that churn.
# The studio console's browser test (Chromium) and the schemathesis runs, in a process of their
# own too: they load the machine, and a test with a 2 s wall-clock budget runs beside the others.
# Cloud sync's suites start a stasis-server (and its pipes) per test: a process of their own
# too, so fewer pipes share one libdispatch (the crash above was seen again under that churn).
swift test "${server[@]}" --skip-build --skip "ServerHostileClientTests|StasisSimulationTests|ConsoleTests|OpenAPITests|StasisCloudSyncTests"
swift test "${server[@]}" --skip-build --filter "StasisCloudSyncTests"
# The same suites on the AsyncHTTPClient transport (the `AsyncHTTPClient` trait's): both
# transports StasisCloud ships hold the sync's whole contract (URLSession's is the default).
STASIS_TEST_TRANSPORT=asynchttpclient swift test "${server[@]}" --skip-build --filter "StasisCloudSyncTests"
swift test "${server[@]}" --skip-build --filter "ConsoleTests|OpenAPITests"
swift test "${server[@]}" --skip-build --filter "ServerHostileClientTests"
swift test "${server[@]}" --skip-build --filter "StasisSimulationTests"
# The save server past one machine (docs/RELIABILITY.md, "Failover"): the cluster of
# scripts/cluster.sh (etcd, Patroni over two PostgreSQL 15, HAProxy, three stasis-server nodes),
# faults from a seeded schedule under load, every acknowledged save read back. Then the negative
# control: the same checker on asynchronous replication must report the saves a failover lost.
stage "failover: a cluster under faults (synchronous replication), and the negative control (asynchronous)"
trap 'scripts/cluster.sh down 2>/dev/null || true' EXIT
failover_seed="${STASIS_FAILOVER_SEED:-1}"
scripts/cluster.sh up | tail -1
.build/debug/stasis-load failover --seed "$failover_seed" --report .build/failover-synchronous.json
scripts/cluster.sh down
scripts/cluster.sh up --async | tail -1
if .build/debug/stasis-load failover --seed "$failover_seed" --faults lagging-failover \
  --report .build/failover-asynchronous.json > .build/failover-asynchronous.txt; then
  cat .build/failover-asynchronous.txt
  echo "the negative control lost nothing: this checker could not have failed"; exit 1
fi
grep -v "^VIOLATION" .build/failover-asynchronous.txt
grep -Eq "[1-9][0-9]* acknowledged saves lost" .build/failover-asynchronous.txt || { echo "no loss reported"; exit 1; }
echo "the negative control: $(grep -c '^VIOLATION' .build/failover-asynchronous.txt) violations reported (as it must)"
scripts/cluster.sh down
trap - EXIT
# Fresh seeds on every run, as issue 20 asks: a broken invariant fails CI and prints the seed to
# replay, which then becomes a regression test (`--seeds FIRST-LAST` reruns a fixed range).
# The fuzzers build meanwhile (a release build with sanitizers, beside the release demo's, whose
# C objects it reuses): the simulation runs on one thread, the compiler takes the other core.
# (The demo's binary is not rebuilt: fuzz.sh takes its seed saves from it.)
stage "stasis-sim (fresh seeds: ${STASIS_SIM_SECONDS:-60} s on SQLite, ${STASIS_SIM_POSTGRES_SECONDS:-30} s on PostgreSQL; the fuzzers build meanwhile)"
STASIS_FUZZ_SCRATCH=.build scripts/fuzz.sh --build-only > .build/fuzz-build.log 2>&1 &
fuzz_build=$!
trap 'pkill -P "$fuzz_build" 2>/dev/null; kill "$fuzz_build" 2>/dev/null || true' EXIT  # a failing stage leaves no compiler behind
.build/debug/stasis-sim --seconds "${STASIS_SIM_SECONDS:-60}"
# The same, with the server on PostgreSQL (a database of each seed's own).
.build/debug/stasis-sim --seconds "${STASIS_SIM_POSTGRES_SECONDS:-30}" --postgres "$STASIS_TEST_POSTGRES_URL"
# The same seed's trace is the same in two processes, byte for byte (nothing of the host in it).
.build/debug/stasis-sim --seed 7 --trace > .build/sim-trace-1.txt
.build/debug/stasis-sim --seed 7 --trace > .build/sim-trace-2.txt
# (`|| exit 1`: under `set -e`, a command that fails before `&&` ends nothing.)
cmp .build/sim-trace-1.txt .build/sim-trace-2.txt || exit 1
echo "seed 7's trace: identical in two runs ($(wc -l < .build/sim-trace-1.txt) lines)"
# A seed that hangs ends the run, naming itself (each run above has a watchdog: --seed-timeout,
# 300 s a seed by default): the control, a limit no seed meets.
if .build/debug/stasis-sim --seed 7 --seed-timeout 0.01 > .build/sim-watchdog.txt; then
  echo "stasis-sim's watchdog did not end a seed past its limit"; exit 1
fi
grep -q "^FAILED seed 7: still running after 0.01 s" .build/sim-watchdog.txt || { cat .build/sim-watchdog.txt; exit 1; }
echo "a seed past its limit: $(head -1 .build/sim-watchdog.txt)"
wait "$fuzz_build" || { cat .build/fuzz-build.log; echo "the fuzzers did not build"; exit 1; }
trap - EXIT
stage "fuzz the decoder (bounded)"
STASIS_FUZZ_SCRATCH=.build STASIS_DEMO=.build/release/stasis-demo scripts/fuzz.sh "${STASIS_FUZZ_SECONDS:-45}" "${STASIS_STATE_FUZZ_SECONDS:-30}"
stage ""
echo "== all passed in $SECONDS s"
