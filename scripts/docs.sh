#!/usr/bin/env bash
# The DocC catalog of Stasis, with the toolchain's own docc (no plugin package to resolve):
#   scripts/docs.sh            → .build/Stasis.doccarchive; any warning fails (CI runs this)
#   scripts/docs.sh preview    → browse it at http://localhost:8080
set -euo pipefail
cd "$(dirname "$0")/.."
# dump-symbol-graph reads every module of the package, the test modules too: build them first.
swift build --build-tests >/dev/null
rm -rf .build/*/symbolgraph
swift package dump-symbol-graph --emit-extension-block-symbols >/dev/null
graphs=.build/docc-symbol-graphs
rm -rf "$graphs" && mkdir -p "$graphs"
# Stasis's own graph and its extensions of other modules (Stasis@Swift), nothing else.
cp .build/*/symbolgraph/Stasis.symbols.json .build/*/symbolgraph/Stasis@*.symbols.json "$graphs"/
options=(--additional-symbol-graph-dir "$graphs" --fallback-display-name Stasis --fallback-bundle-identifier Stasis)
if [ "${1:-}" = preview ]; then
  exec docc preview Sources/Stasis/Stasis.docc "${options[@]}"
fi
docc convert Sources/Stasis/Stasis.docc "${options[@]}" --output-path .build/Stasis.doccarchive --warnings-as-errors
