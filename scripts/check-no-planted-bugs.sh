#!/usr/bin/env bash
# Nothing of the simulation ships: a binary built without the PlantedBugs trait holds no
# planted-bug or simulated-crash symbol. Usage: scripts/check-no-planted-bugs.sh BINARY...
# With --control BINARY first, that binary (built with the trait, such as stasis-sim) must hold
# them: the pattern is proven to match before it is trusted to find nothing.
set -euo pipefail
pattern='PlantedBugs|SimulatedCrash|dieInsideNextUpload|takeDiedInsideUpload'
if [ "${1:-}" = "--control" ]; then
  control=$(nm "$2" | grep -cE "$pattern" || true)
  [ "$control" -gt 0 ] || { echo "the control $2 holds no planted-bug symbol: the check would prove nothing"; exit 1; }
  echo "control: $2 holds $control planted-bug symbols (built with the trait)"
  shift 2
fi
for binary in "$@"; do
  found=$(nm "$binary" | grep -E "$pattern" || true)
  if [ -n "$found" ]; then
    echo "$binary ships planted-bug symbols:"
    echo "$found" | head -5
    exit 1
  fi
  echo "$binary: no planted-bug symbol ($(nm "$binary" | wc -l) symbols)"
done
