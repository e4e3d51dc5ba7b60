#!/usr/bin/env python3
"""Nothing of the simulation ships, checked in the sources:

1. No file under Sources/, Demo/ or Server/Sources/ outside the simulation names a planted bug:
   the catalogue (StasisSimulation's `PlantedBug`, read from its source: each case's name and its
   `--plant` name) and the simulation's fault types are the simulation's alone.
2. Every seam (what lets the simulation vary a rule: a `Seams` type, an `@_spi(Simulation)`
   declaration) sits inside an `#if SimulationSeams` block (not its `#else`), so a build without
   the trait compiles none of them. The rules themselves are values that ship (`StoreRules`,
   `SyncRules`: `@_spi(Simulation)` structs, each rule's default written once): only a seam can
   hand a store or a sync other values than their defaults.
3. `#if SimulationSeams` appears in at most one file per module of Sources/, Demo/ and
   Server/Sources/ (swift-system keeps its mocking in one file): a module's seams are read in one
   place, and no rule is written twice, once as a switch and once as a constant.

Prints each offending file:line. Usage: scripts/check-planted-bugs.py  (from the repository's root)
"""
import pathlib
import re
import sys

ROOTS = ["Sources", "Demo", "Server/Sources"]
SIMULATION = {"Server/Sources/StasisSimulation", "Server/Sources/stasis-sim"}
CATALOGUE = pathlib.Path("Server/Sources/StasisSimulation/Simulation.swift")
FAULTS = ["PlantedBug", "PlantedBugs", "plantedBug", "plantedBugs", "DeathInsideCommit", "SimulatedCrash", "dieInsideNextUpload"]
SEAM = re.compile(r"@_spi\(Simulation\)\s+(public|package)\s+(var|let|struct|init|convenience init)\b|struct \w*Seams\b")
RULES = re.compile(r"@_spi\(Simulation\)\s+public\s+struct\s+\w+Rules\b")


def catalogue():
    text = CATALOGUE.read_text()
    body = text[text.index("public enum PlantedBug"):]
    body = body[: body.index("\n}\n")]
    cases = re.findall(r'case (\w+) = "([a-z0-9-]+)"', body)
    if len(cases) < 5:
        sys.exit(f"{CATALOGUE}: the catalogue of planted bugs was not found (read {len(cases)} cases)")
    return cases


def seams_outside_the_trait(path: pathlib.Path):
    stack = []  # per open #if: [is `#if SimulationSeams`, in its #else]
    for number, line in enumerate(path.read_text().splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("#if"):
            stack.append([stripped.split() == ["#if", "SimulationSeams"], False])
        elif stripped.startswith("#else") or stripped.startswith("#elseif"):
            if stack:
                stack[-1][1] = True
        elif stripped.startswith("#endif"):
            if stack:
                stack.pop()
        elif not stripped.startswith("//") and SEAM.search(line) and not RULES.search(line):
            if not any(seams and not in_else for seams, in_else in stack):
                yield number, stripped


def main() -> int:
    cases = catalogue()
    names = FAULTS + [name for name, _ in cases] + [plant for _, plant in cases]
    pattern = re.compile("|".join(rf"\b{re.escape(name)}\b" for name in names))
    bad = checked = seams = 0
    trait_files = {}  # module folder -> files with `#if SimulationSeams`
    for root in ROOTS:
        for path in sorted(p for p in pathlib.Path(root).rglob("*") if p.is_file()):
            if any(str(path).startswith(folder + "/") for folder in SIMULATION):
                continue
            try:
                text = path.read_text()
            except UnicodeDecodeError:
                continue
            checked += 1
            for number, line in enumerate(text.splitlines(), 1):
                if found := pattern.search(line):
                    print(f"{path}:{number}: names the simulation's '{found.group(0)}' outside the simulation")
                    bad += 1
            if path.suffix == ".swift":
                if re.search(r"^\s*#if SimulationSeams\b", text, re.M):
                    parts = path.parts
                    module = "/".join(parts[: (3 if parts[0] in ("Server", "Sources") else 2)])
                    trait_files.setdefault(module, []).append(str(path))
                seams += len(SEAM.findall(text))
                for number, line in seams_outside_the_trait(path):
                    print(f"{path}:{number}: a seam outside #if SimulationSeams: {line}")
                    bad += 1
    for root in ["Server/Sources/StasisSimulation", "Server/Sources/stasis-sim"]:
        for path in sorted(pathlib.Path(root).rglob("*.swift")):
            if re.search(r"^\s*#if SimulationSeams\b", path.read_text(), re.M):
                trait_files.setdefault(root, []).append(str(path))
    for module, files in sorted(trait_files.items()):
        if len(files) > 1:
            print(f"{module}: #if SimulationSeams in {len(files)} files, at most one per module: {', '.join(files)}")
            bad += 1
    if bad:
        return 1
    print(
        f"{checked} files outside the simulation name none of its {len(cases)} planted bugs; "
        f"{seams} seam declarations, each inside #if SimulationSeams, in {len(trait_files)} modules "
        f"of one file each ({', '.join(sorted(pathlib.Path(f[0]).name for f in trait_files.values()))})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
