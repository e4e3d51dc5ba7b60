#!/usr/bin/env bash
# Nothing of the simulation ships: a binary built without the SimulationSeams trait holds no
# symbol of the simulation's planted bugs, of its crash fault, or of the seams (`seams`, `Seams`:
# each module's one file of them, `StoreRules.swift`, `SyncRules.swift`, `StorageSeams.swift`)
# by which it varies the library's and the server's rules. The rules themselves (`StoreRules`,
# `SyncRules`, `StorageRules`) ship, as values nothing outside those files can set. Usage:
#   scripts/check-no-planted-bugs.sh BINARY...
# With --control BINARY first, that binary (built with the trait, such as stasis-sim) must hold
# them: the pattern is proven to match before it is trusted to find nothing.
set -euo pipefail
pattern='PlantedBug|DeathInsideCommit|[Ss]eams'
if [ "${1:-}" = "--control" ]; then
  control=$(nm "$2" | grep -cE "$pattern" || true)
  # The seams are what the trait adds (the catalogue is in every stasis-sim): they must show.
  seams=$(nm "$2" | grep -cE "[Ss]eams" || true)
  [ "$seams" -gt 0 ] || { echo "the control $2 holds no seam symbol: the check would prove nothing"; exit 1; }
  echo "control: $2 holds $control symbols of the simulation, $seams of them seams (built with the trait)"
  shift 2
fi
for binary in "$@"; do
  found=$(nm "$binary" | grep -E "$pattern" || true)
  if [ -n "$found" ]; then
    echo "$binary ships symbols of the simulation:"
    echo "$found" | head -5
    exit 1
  fi
  echo "$binary: no symbol of the simulation ($(nm "$binary" | wc -l) symbols)"
done
