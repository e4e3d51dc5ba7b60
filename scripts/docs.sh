#!/usr/bin/env bash
# The DocC catalog of Stasis, with the toolchain's own docc (no plugin package to resolve):
#   scripts/docs.sh            → .build/Stasis.doccarchive; any warning fails (CI runs this)
#   scripts/docs.sh preview    → browse it at http://localhost:8080
set -euo pipefail
cd "$(dirname "$0")/.."
# Stasis's symbol graph from the debug build's modules (swift package dump-symbol-graph would
# rebuild the whole package in a configuration of its own, and read every module).
swift build --target Stasis >/dev/null
triple=$(swift -print-target-info | python3 -c "import json, sys; print(json.load(sys.stdin)['target']['unversionedTriple'])")
build=.build/$triple/debug
graphs=.build/docc-symbol-graphs
rm -rf "$graphs" && mkdir -p "$graphs"
clang_modules=()
for map in .build/checkouts/*/Sources/*/include/module.modulemap "$build"/*.build/module.modulemap; do
  [ -f "$map" ] && clang_modules+=(-Xcc "-fmodule-map-file=$PWD/$map" -Xcc -I -Xcc "$PWD/$(dirname "$map")")
done
clang_modules+=(-Xcc -I -Xcc "$PWD/Sources/CStasisChecksum/include")
# Stasis's own graph and its extensions of other modules (Stasis@Swift), nothing else.
swift-symbolgraph-extract -module-name Stasis -target "$triple" -module-cache-path "$build/ModuleCache" \
  "${clang_modules[@]}" -I "$build/Modules" -minimum-access-level public -emit-extension-block-symbols \
  -output-dir "$graphs"
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
