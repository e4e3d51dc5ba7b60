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
# The landing page lists the whole public surface by topic: a public type it does not name fails.
python3 - "$graphs/Stasis.symbols.json" Sources/Stasis/Stasis.docc/Stasis.md <<'PY'
import json, sys
symbols = json.load(open(sys.argv[1]))["symbols"]
page = open(sys.argv[2]).read()
kinds = ("swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias")
types = sorted({s["pathComponents"][0] for s in symbols if len(s["pathComponents"]) == 1 and s["kind"]["identifier"] in kinds})
missing = [t for t in types if "``" + t + "``" not in page]
if missing:
    sys.exit("Stasis.md does not list: " + ", ".join(missing))
print(f"Stasis's public surface: {len(symbols)} symbols, {len(types)} top-level types, every one on the landing page")
PY
