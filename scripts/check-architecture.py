#!/usr/bin/env python3
"""docs/ARCHITECTURE.md and Package.swift match the folders.

The root package's modules live by layer: `Sources/<Layer>/<Target>` (Core, Sync, Records,
Platform, Tools, Testing) and `Demo/<Target>`; `Server/Sources/<Target>` is the server's
package. This fails CI, naming the path, when:
- a layer folder is not drawn in docs/ARCHITECTURE.md (as `Sources/<Layer>/`), or Package.swift's
  `layers` map puts a target in another folder than the one it is in;
- a target is not named in docs/ARCHITECTURE.md (`Target`), or a folder inside a target
  (`Store/`, `Settings/`, …) is not named there as `Folder/`;
- a target of either package depends on a module its layer's row, and its own, in the table
  between `<!-- layers -->` and `<!-- /layers -->` of docs/ARCHITECTURE.md do not allow (the
  dependencies as `swift package dump-package` reads them from both manifests). Each run first
  plants wrong edges and fails unless every one is caught: the check is proven before it is
  trusted to find nothing.

Usage: scripts/check-architecture.py  (from the repository's root)
"""
import json
import pathlib
import re
import subprocess
import sys

text = pathlib.Path("docs/ARCHITECTURE.md").read_text()
manifest = pathlib.Path("Package.swift").read_text()
mapped = {}  # target -> folder, from Package.swift's `layers`
for folder, names in re.findall(r'\(\s*"((?:Sources/)?\w+)",\s*\[([^\]]*)\]\s*\)', manifest):
    for name in re.findall(r'"([^"]+)"', names):
        mapped[name] = folder

missing = []
targets = []  # (folder it is in, target path)
for layer in sorted(p for p in pathlib.Path("Sources").iterdir() if p.is_dir()):
    if f"`{layer}/`" not in text:
        missing.append(f"{layer}: the layer is not drawn in docs/ARCHITECTURE.md (as `{layer}/`)")
    targets += [(str(layer), t) for t in sorted(p for p in layer.iterdir() if p.is_dir())]
targets += [("Demo", t) for t in sorted(p for p in pathlib.Path("Demo").iterdir() if p.is_dir())]
for folder, target in targets:
    if mapped.get(target.name) != folder:
        missing.append(f"{target}: Package.swift's layers put it in {mapped.get(target.name, 'no folder')}")
for name, folder in sorted(mapped.items()):
    if not pathlib.Path(folder, name).is_dir():
        missing.append(f"{folder}/{name}: in Package.swift's layers, but there is no such folder")
targets += [("Server/Sources", t) for t in sorted(p for p in pathlib.Path("Server/Sources").iterdir() if p.is_dir())]

count = 0
for _, target in targets:
    count += 1
    if f"`{target.name}`" not in text:
        missing.append(f"{target}: the target is not in docs/ARCHITECTURE.md")
    for folder in sorted(p for p in target.iterdir() if p.is_dir()):
        if folder.suffix == ".docc" or folder.name == "include":
            continue
        count += 1
        if f"`{folder.name}/`" not in text:
            missing.append(f"{folder}: the folder is not in docs/ARCHITECTURE.md (as `{folder.name}/`)")
def manifest(path):
    """The targets of the package at `path`: name -> (folder, type, [(module, package or None)])."""
    out = subprocess.run(
        ["swift", "package", "--package-path", path, "dump-package"], check=True, capture_output=True, text=True
    ).stdout
    targets = {}
    for target in json.loads(out)["targets"]:
        deps = []
        for dependency in target["dependencies"]:
            kind, value = next(iter(dependency.items()))
            deps.append((value[0], value[1] if kind == "product" else None))
        folder = target.get("path") or f"Sources/{target['name']}"
        targets[target["name"]] = (folder, target["type"], deps)
    return targets


def allowed_table():
    """The table's rows: a layer folder (`Sources/Sync/`) or a target name -> what it may use."""
    section = re.search(r"<!-- layers[^>]*-->(.*?)<!-- /layers -->", text, re.S)
    if not section:
        sys.exit("docs/ARCHITECTURE.md has no table between <!-- layers --> and <!-- /layers -->")
    rows = {}
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        rows[cells[0].strip("`")] = set(re.findall(r"`([^`]+)`", cells[1]))
    return rows


def layer_of(folder):
    """`Sources/Sync/` for `Sources/Sync/StasisCloud`; `Demo/`, `Examples/`, `Tests/` for theirs."""
    parts = folder.split("/")
    return "/".join(parts[:2]) + "/" if parts[0] == "Sources" else parts[0] + "/"


def wrong_edges(root, server, rows, planted=()):
    """Every dependency the table does not allow, as `from → to: why`."""
    layer = {name: layer_of(folder) for name, (folder, kind, _) in root.items()}
    found = []

    def check(name, kind, deps, own_layer):
        if kind == "test":
            return
        may = set(rows.get(name, set()))
        if own_layer:
            may |= rows.get(own_layer, set()) | {own_layer}
        for module, package in deps:
            if package not in (None, "Stasis"):
                continue  # a package from outside
            if module in root and (package == "Stasis" or own_layer):
                target_layer = layer[module]
                if target_layer in may or module in may:
                    continue
                found.append(f"{name} → {module}: {module} is in {target_layer}, which {own_layer or name} may not use")
            elif module in server and module in may:
                continue
            elif module in server:
                found.append(f"{name} → {module}: the table does not let {name} use {module}")

    for name, (folder, kind, deps) in root.items():
        extra = [(to, None) for f, to in planted if f == name]
        check(name, kind, deps + extra, layer[name])
    for name, (folder, kind, deps) in server.items():
        if name not in rows and kind != "test":
            found.append(f"Server/{name}: no row of its own in docs/ARCHITECTURE.md's layer table")
            continue
        extra = [(to, "Stasis" if to in root else None) for f, to in planted if f == name]
        check(name, kind, deps + extra, None)
    return found


root_targets = manifest(".")
server_targets = manifest("Server")
rows = allowed_table()
for row in rows:
    if row.endswith("/") and row not in {layer_of(f) for f, _, _ in root_targets.values()}:
        missing.append(f"{row}: a row of the layer table, but no target is in that layer")
found = wrong_edges(root_targets, server_targets, rows)
missing += found
planted = [("StasisReplay", "StasisInspect"), ("Stasis", "StasisCloud"), ("StasisServer", "StasisSimulation")]
for edge in planted:
    caught = set(wrong_edges(root_targets, server_targets, rows, [edge])) - set(found)
    if not any(line.startswith(f"{edge[0]} → {edge[1]}:") for line in caught):
        missing.append(f"the planted wrong edge {edge[0]} → {edge[1]} was not caught: the edge check proves nothing")
edge_count = sum(len(deps) for _, _, deps in root_targets.values()) + sum(
    len(deps) for _, _, deps in server_targets.values())

for line in missing:
    print(line)
if missing:
    sys.exit(1)
print(
    f"docs/ARCHITECTURE.md and Package.swift's layers match the folders: "
    f"{count} targets and folders under Sources/<layer>/, Demo/ and Server/Sources/; "
    f"{edge_count} dependencies of {len(root_targets) + len(server_targets)} targets as the layer table allows "
    f"({len(planted)} planted wrong edges caught)"
)
