#!/usr/bin/env bash
# The DocC catalogs of Stasis's libraries, one per module, with the toolchain's own docc (no plugin package to resolve), and
# the docs' checks (scripts/check-docs.py):
#   scripts/docs.sh            → .build/Stasis.doccarchive; any DocC warning or failed check fails (CI runs this);
#                                its last line says how to open it
#   scripts/docs.sh preview [MODULE] → browse one module's catalog (Stasis by default) at http://localhost:8080
# The checks: the public-symbol count of each library module; the landing page lists every
# public type of Stasis; every name in code font in README.md and the articles resolves (to a
# public, not deprecated, symbol of the libraries, a tool's command or flag, or an entry of
# scripts/docs-allowlist.txt); every relative link and #anchor in the Markdown reaches its target.
set -euo pipefail
cd "$(dirname "$0")/.."
# The library modules' symbol graphs from the debug build's modules (swift package
# dump-symbol-graph would rebuild the whole package in a configuration of its own, and read
# every module). StasisDemoGame's names resolve too (its article documents the demo); it is not counted.
libraries=(Stasis StasisCloud StasisMerge StasisTesting StasisDelta StasisInspect StasisSDL StasisNotify StasisRecords StasisReplay)
for target in StasisDemoGame StasisCloud StasisInspect StasisTesting StasisSDL StasisNotify StasisRecords StasisReplay; do # and what they depend on
  swift build --target "$target" >/dev/null
done
triple=$(swift -print-target-info | python3 -c "import json, sys; print(json.load(sys.stdin)['target']['unversionedTriple'])")
build=.build/$triple/debug
graphs=.build/docc-symbol-graphs
rm -rf "$graphs" && mkdir -p "$graphs"
clang_modules=()
for map in .build/checkouts/*/Sources/*/include/module.modulemap .build/checkouts/*/Sources/*/module.modulemap "$build"/*.build/module.modulemap \
  Sources/*/*/module.modulemap; do
  [ -f "$map" ] && clang_modules+=(-Xcc "-fmodule-map-file=$PWD/$map" -Xcc -I -Xcc "$PWD/$(dirname "$map")")
done
clang_modules+=(-Xcc -I -Xcc "$PWD/Sources/Core/CStasisChecksum/include")
# CStasisLibNotify's header includes GLib's, which live in folders only pkg-config knows.
for flag in $(pkg-config --cflags-only-I libnotify); do clang_modules+=(-Xcc "$flag"); done
# Each module's own graph and its extensions of other modules (Stasis@Swift), one folder each:
# each catalog reads its own module's.
for module in "${libraries[@]}" StasisDemoGame; do
  mkdir -p "$graphs/$module"
  swift-symbolgraph-extract -module-name "$module" -target "$triple" -module-cache-path "$build/ModuleCache" \
    "${clang_modules[@]}" -I "$build/Modules" -minimum-access-level public -emit-extension-block-symbols \
    -output-dir "$graphs/$module"
done
# One catalog per module, beside its sources; each converted with its own module's graph, then
# merged into one archive with a landing page that lists them. The tools' guides are Markdown in
# docs/ (no module of theirs is a game's to import).
mapfile -t catalogs < <(find Sources -name '*.docc' -type d | sort)
if [ "${1:-}" = preview ]; then
  module=${2:-Stasis}
  for catalog in "${catalogs[@]}"; do
    [ "$(basename "$catalog" .docc)" = "$module" ] || continue
    exec docc preview "$catalog" --additional-symbol-graph-dir "$graphs/$module" \
      --fallback-display-name "$module" --fallback-bundle-identifier "$module"
  done
  echo "no catalog for $module: one of ${catalogs[*]}" >&2
  exit 64
fi
checks=0
python3 scripts/check-docs.py "$graphs" || checks=$?
archives=.build/docc-archives
rm -rf "$archives" && mkdir -p "$archives"
for catalog in "${catalogs[@]}"; do
  module=$(basename "$catalog" .docc)
  docc convert "$catalog" --additional-symbol-graph-dir "$graphs/$module" --fallback-display-name "$module" \
    --fallback-bundle-identifier "$module" --output-path "$archives/$module.doccarchive" --warnings-as-errors
done
rm -rf .build/Stasis.doccarchive
docc merge "$archives"/*.doccarchive --output-path .build/Stasis.doccarchive --synthesized-landing-page-name Stasis \
  --synthesized-landing-page-topics-style list
# The last line says how to open what was built (a static-hosting archive: any web server serves it).
echo "Open the reference: python3 -m http.server --directory .build/Stasis.doccarchive 8000, then http://localhost:8000/documentation/stasis"
exit "$checks"
