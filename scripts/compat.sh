#!/usr/bin/env bash
# A game written against the previous release (Examples/Compat, 0.10.0's API) must build with
# deprecation warnings only, each saying what to write now. Compiles that one target again and
# reads its diagnostics: any error, or any warning that is not a deprecation, fails.
set -euo pipefail
cd "$(dirname "$0")/.."
touch Examples/Compat/main.swift
log=$(swift build --product stasis-compat 2>&1) || { echo "$log"; echo "compat: Examples/Compat does not build"; exit 1; }
diagnostics=$(grep -E "^$PWD/Examples/Compat/[^:]+:[0-9]+:[0-9]+: (warning|error):" <<<"$log" | sort -u || true)
others=$(grep -v "is deprecated" <<<"$diagnostics" || true)
unhelpful=$(grep "is deprecated" <<<"$diagnostics" | grep -Ev "renamed to '|replaced by '|: use " || true)
count=$(grep -c "is deprecated" <<<"$diagnostics" || true)
echo "$diagnostics" | sed "s|^$PWD/||"
if [ -n "$others" ]; then echo "compat: diagnostics that are not deprecations:"; echo "$others"; exit 1; fi
if [ -n "$unhelpful" ]; then echo "compat: deprecations that do not say what to write:"; echo "$unhelpful"; exit 1; fi
if [ "$count" -lt 2 ]; then echo "compat: only $count deprecation warnings; the game uses at least 2 deprecated calls"; exit 1; fi
echo "compat: a game written against 0.10.0 builds with $count deprecation warnings, each naming what to write"
