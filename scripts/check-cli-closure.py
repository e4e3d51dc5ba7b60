#!/usr/bin/env python3
"""Fails when the `stasis` CLI's dependency closure reaches SDL or the demo game.

StasisCloud, StasisRecords and StasisReplay are in it on purpose (`stasis cloud`, `stasis records`,
`stasis replay`): none knows SDL or the demo, and their HTTP client and GRDB are product
dependencies under the `Cloud`
and `Records` traits, which this walk of target dependencies does not follow.

Reads `swift package describe --type json` on standard input."""
import json
import sys

package = json.load(sys.stdin)
targets = {target["name"]: target for target in package["targets"]}
closure, pending = set(), ["stasis"]
while pending:
    name = pending.pop()
    if name in closure or name not in targets:
        continue
    closure.add(name)
    pending.extend(targets[name].get("target_dependencies", []))
forbidden = sorted(closure & {"CStasisSDL2", "CStasisSDL2Image", "StasisSDL", "StasisDemoGame"})
if forbidden:
    sys.exit(f"the stasis CLI depends on {', '.join(forbidden)}")
print(f"stasis depends on {', '.join(sorted(closure - {'stasis'}))} (no SDL, no demo code)")
