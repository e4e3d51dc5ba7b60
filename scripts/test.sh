#!/usr/bin/env bash
# Every test: installs what is missing, builds, lints, and runs the whole suite headless.
set -euo pipefail
cd "$(dirname "$0")/.."
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
export SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy
echo "== swift format lint"
swift format lint --strict -r Sources Tests Examples Package.swift
echo "== the stasis CLI needs only Stasis"
swift package describe --type json | python3 scripts/check-cli-closure.py
echo "== documentation (DocC, warnings are errors)"
swift package generate-documentation --target Stasis --warnings-as-errors >/dev/null
echo "== build"
swift build --build-tests
# The end-to-end runs of the stress level take seconds in release and minutes in debug.
swift build -c release --product stasis-demo
export STASIS_USE_RELEASE=1
echo "== swift test"
# The descriptor flood (thousands of sockets) and the simulation (servers opened and crashed
# in-process) each run in a test process of their own: libdispatch in a process shared with
# the other suites' pipes and sockets was seen to crash once under that churn.
swift test --skip-build --skip "ServerHostileClientTests|StasisSimulationTests"
swift test --skip-build --filter "ServerHostileClientTests"
swift test --skip-build --filter "StasisSimulationTests"
# Fresh seeds each run (the debug build `swift build --build-tests` made; no extra build):
# devices, the in-process server, simulated disks and faults, every invariant after every step.
# Fresh seeds on every run, as issue 20 asks: a broken invariant fails CI and prints the seed to
# replay, which then becomes a regression test (`--seeds FIRST-LAST` reruns a fixed range).
echo "== stasis-sim (${STASIS_SIM_SECONDS:-60} s of fresh seeds)"
.build/debug/stasis-sim --seconds "${STASIS_SIM_SECONDS:-60}"
echo "== fuzz the decoder (bounded)"
scripts/fuzz.sh "${STASIS_FUZZ_SECONDS:-45}" "${STASIS_STATE_FUZZ_SECONDS:-30}"
