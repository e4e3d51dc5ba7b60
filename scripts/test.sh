#!/usr/bin/env bash
# Every test: installs what is missing, builds, lints, and runs the whole suite headless.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy
swift build --build-tests
echo "== swift format lint"
swift format lint --strict -r Sources Tests Package.swift
echo "== swift test"
swift test --skip-build
