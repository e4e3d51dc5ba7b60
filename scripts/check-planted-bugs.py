#!/usr/bin/env python3
"""Nothing of the simulation ships: outside the simulation's own targets, every line of source
that names a planted bug or the simulated crash sits inside an `#if PlantedBugs` block (not its
`#else`), so a build without the trait compiles none of it. Prints each offending file:line.

Usage: scripts/check-planted-bugs.py  (from the repository's root)
"""
import pathlib
import re
import sys

PATTERN = re.compile(r"PlantedBugs|plantedBugs|SimulatedCrash|dieInsideNextUpload|takeDiedInsideUpload")
ROOTS = ["Sources", "Demo", "Server/Sources"]
SIMULATION = {"Server/Sources/StasisSimulation", "Server/Sources/stasis-sim"}


def offending(path: pathlib.Path):
    # A stack of (is-a-PlantedBugs-#if, in-its-#else) per open #if.
    stack = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#if"):
            stack.append([stripped.split() == ["#if", "PlantedBugs"], False])
            continue
        if stripped.startswith("#elseif") or stripped.startswith("#else"):
            if stack:
                stack[-1][1] = True
            continue
        if stripped.startswith("#endif"):
            if stack:
                stack.pop()
            continue
        if stripped.startswith("//") or not PATTERN.search(line):
            continue
        if not any(planted and not in_else for planted, in_else in stack):
            yield number, stripped


def main() -> int:
    bad = 0
    checked = 0
    for root in ROOTS:
        for path in sorted(pathlib.Path(root).rglob("*.swift")):
            if any(str(path).startswith(folder + "/") for folder in SIMULATION):
                continue
            checked += 1
            for number, text in offending(path):
                print(f"{path}:{number}: names a planted bug outside #if PlantedBugs: {text}")
                bad += 1
    if bad:
        return 1
    print(f"{checked} source files outside the simulation: every planted bug inside #if PlantedBugs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
