#!/usr/bin/env python3
"""docs/ARCHITECTURE.md and Package.swift match the folders.

The root package's modules live by layer: `Sources/<Layer>/<Target>` (Core, Sync, Records,
Platform, Tools, Testing) and `Demo/<Target>`; `Server/Sources/<Target>` is the server's
package. This fails CI, naming the path, when:
- a layer folder is not drawn in docs/ARCHITECTURE.md (as `Sources/<Layer>/`), or Package.swift's
  `layers` map puts a target in another folder than the one it is in;
- a target is not named in docs/ARCHITECTURE.md (`Target`), or a folder inside a target
  (`Store/`, `Settings/`, …) is not named there as `Folder/`.

Usage: scripts/check-architecture.py  (from the repository's root)
"""
import pathlib
import re
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
for line in missing:
    print(line)
if missing:
    sys.exit(1)
print(
    f"docs/ARCHITECTURE.md and Package.swift's layers match the folders: "
    f"{count} targets and folders under Sources/<layer>/, Demo/ and Server/Sources/"
)
