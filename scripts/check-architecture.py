#!/usr/bin/env python3
"""docs/ARCHITECTURE.md matches the folders: every target under Sources/ and Server/Sources/
is named in it (`Target`), and every folder inside a target (`Store/`, `Settings/`, …) is named
as `Folder/`. A folder or target added without a line there fails CI with its path.

Usage: scripts/check-architecture.py  (from the repository's root)
"""
import pathlib
import sys

text = pathlib.Path("docs/ARCHITECTURE.md").read_text()
missing = []
count = 0
for root in ("Sources", "Server/Sources"):
    for target in sorted(p for p in pathlib.Path(root).iterdir() if p.is_dir()):
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
print(f"docs/ARCHITECTURE.md names all {count} targets and folders under Sources/ and Server/Sources/")
