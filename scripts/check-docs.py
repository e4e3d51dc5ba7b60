#!/usr/bin/env python3
"""The docs stage's checks (scripts/docs.sh runs this after DocC), each failure printed as file:line.

  python3 scripts/check-docs.py GRAPHS     GRAPHS: a folder of symbol graphs, one folder per module

1. The public-symbol count of each library module, and the total.
2. Stasis.md lists every public top-level type of Stasis.
3. Identifiers: every name written in code font in README.md and the DocC articles resolves
   (the rules are at `check_span`; the allowlist, with a reason per name, is docs-allowlist.txt).
4. Links: every relative link and #anchor in README.md, CHANGELOG.md, docs/*.md and the DocC
   articles reaches a file, and a heading in it.
"""

import glob
import json
import os
import re
import sys
import unicodedata

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# One DocC catalog per library module, found in its folder; the tools' guides are Markdown in docs/.
CATALOG = "Sources/Core/Stasis/Stasis.docc"
CATALOGS = sorted(os.path.relpath(path, ROOT) for path in glob.glob(os.path.join(ROOT, "Sources", "**", "*.docc"), recursive=True))
# The tools' guides: checked as the articles are.
GUIDES = ["docs/CLI.md", "docs/SAVE-SERVER.md", "docs/CONSOLE.md", "docs/DEMO.md"]
# The library products a game adopts; StasisDemoGame's names resolve too (its article documents the
# demo), but it is not counted.
LIBRARY = ["Stasis", "StasisCloud", "StasisMerge", "StasisTesting", "StasisDelta", "StasisInspect", "StasisSDL", "StasisNotify", "StasisRecords", "StasisReplay"]
DEMO = ["StasisDemoGame"]

failures = []


def fail(path, line, message):
    failures.append(f"{path}:{line}: {message}")


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return handle.read()


# ─── Symbol graphs ──────────────────────────────────────────────────────────────────────────


def deprecated(symbol):
    return any(
        entry.get("isUnconditionallyDeprecated") or "deprecated" in entry for entry in symbol.get("availability", [])
    )


def parameters(symbol):
    """The argument labels of a function, initializer, case or subscript, each with whether it has
    a default; None for a symbol that takes no arguments (a property, a type)."""
    title = symbol["names"]["title"]
    match = re.search(r"\(([^()]*)\)$", title)
    if not match or symbol["kind"]["identifier"] in ("swift.property", "swift.type.property"):
        return None
    labels = [label for label in match.group(1).split(":") if label]
    declaration = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
    defaults = []
    start = declaration.find("(")
    if start >= 0:
        depth, current, parts = 0, "", []
        for position, character in enumerate(declaration[start + 1 :], start + 1):
            if character in "([<{":
                depth += 1
            elif character in ")]}" or character == ">" and declaration[position - 1] != "-":
                if depth == 0:
                    parts.append(current)
                    break
                depth -= 1
            if character == "," and depth == 0:
                parts.append(current)
                current = ""
            else:
                current += character
        # A default, or a closure last: `saveInBackground(named:)` is called with a trailing closure.
        defaults = [" = " in part for part in parts]
        if parts and ("->" in parts[-1] or "@escaping" in parts[-1]):
            defaults[-1] = True
    if len(defaults) != len(labels):
        defaults = [False] * len(labels)
    return list(zip(labels, defaults))


class SymbolIndex:
    def __init__(self, folder):
        self.by_path = {}  # "SaveStore.load" → symbols
        self.by_name = {}  # "load" → symbols, any type's member
        self.top_level = set()
        self.library_types = set()  # the library modules' own top-level types
        self.counts = {}
        self.stasis_types = []
        for module in LIBRARY + DEMO:
            files = sorted(glob.glob(os.path.join(folder, module, "*.symbols.json")))
            if not files:
                sys.exit(f"no symbol graph for {module} in {folder}")
            count = 0
            for path in files:
                graph = json.load(open(path))
                own = os.path.basename(path) == f"{module}.symbols.json"
                for symbol in graph["symbols"]:
                    if symbol["kind"]["identifier"] == "swift.extension":
                        continue  # the block, not a symbol of the module's
                    count += 1
                    components = [re.sub(r"\(.*$", "", part) for part in symbol["pathComponents"]]
                    entry = {
                        "module": module,
                        "title": ".".join(symbol["pathComponents"]),
                        "deprecated": deprecated(symbol),
                        "parameters": parameters(symbol),
                        "kind": symbol["kind"]["identifier"],
                    }
                    self.by_path.setdefault(".".join(components), []).append(entry)
                    self.by_name.setdefault(components[-1], []).append(entry)
                    if len(components) == 1 and own:
                        self.top_level.add(components[0])
                        if module in LIBRARY:
                            self.library_types.add(components[0])
                        if module == "Stasis" and entry["kind"] in (
                            "swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias"
                        ):
                            self.stasis_types.append(components[0])
            self.counts[module] = count
        self.modules = set(LIBRARY + DEMO)


def labels_match(written, symbol_parameters):
    """`written` (the labels a span writes, `_` for an unlabelled argument) is the symbol's labels
    with only defaulted ones left out, in order."""
    if symbol_parameters is None:
        return False
    position = 0
    for label in written:
        while position < len(symbol_parameters) and symbol_parameters[position][0] != label:
            if not symbol_parameters[position][1]:
                return False  # a label without a default was skipped
            position += 1
        if position == len(symbol_parameters):
            return False
        position += 1
    return all(has_default for _, has_default in symbol_parameters[position:])


def verdict(candidates, written):
    """(resolved, deprecated-only) for the symbols a name matched, against the call's labels."""
    if written is not None:
        candidates = [
            entry
            for entry in candidates
            if labels_match(written, entry["parameters"])
            or (entry["kind"] in ("swift.struct", "swift.class", "swift.enum") and written == [])
        ]
    if not candidates:
        return False, False
    live = [entry for entry in candidates if not entry["deprecated"]]
    return bool(live), not live


# ─── Sources: the CLIs, the tests, the examples, the server ────────────────────────────────


def swift_files(*folders):
    for folder in folders:
        yield from sorted(glob.glob(os.path.join(ROOT, folder, "**", "*.swift"), recursive=True))


def strip_swift(text):
    """The source without comments, and its string literals' contents, apart."""
    code, literals, index = [], [], 0
    while index < len(text):
        if text.startswith("//", index):
            end = text.find("\n", index)
            index = len(text) if end < 0 else end
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = len(text) if end < 0 else end + 2
        elif text.startswith('"""', index):
            end = text.find('"""', index + 3)
            end = len(text) if end < 0 else end
            literals.append(text[index + 3 : end])
            code.append('""')
            index = end + 3
        elif text[index] == '"':
            end, escaped = index + 1, False
            while end < len(text) and (escaped or text[end] != '"') and text[end] != "\n":
                escaped = not escaped and text[end] == "\\"
                end += 1
            literals.append(text[index + 1 : end])
            code.append('""')
            index = end + 1
        else:
            code.append(text[index])
            index += 1
    return "".join(code), literals


def scopes(code):
    """Each type or extension declared in `code`: (kind, qualified name, its header up to `{`,
    its own text without the bodies of the types nested in it); and the text outside them."""
    found, text_of = [], {None: []}
    stack = [None]  # per open brace: the index into `found` whose text it belongs to
    pending = None
    for match in re.finditer(r"\b(struct|class|enum|protocol|actor|extension)\s+([A-Za-z_][\w.]*)([^{};]*)(?=\{)|[{}]|[^{}]", code):
        token = match.group(0)
        if match.group(1):
            pending = (match.group(1), match.group(2), match.group(3))
        elif token == "{" and pending:
            parent = stack[-1]
            prefix = found[parent][1] + "." if parent is not None and pending[0] != "extension" else ""
            found.append((pending[0], prefix + pending[1], pending[2]))
            text_of[len(found) - 1] = []
            stack.append(len(found) - 1)
            pending = None
        elif token == "{":
            stack.append(stack[-1])
            text_of[stack[-1]].append(token)
        elif token == "}":
            if len(stack) > 1:
                closing = stack.pop()
                if closing == stack[-1]:
                    text_of[closing].append(token)
        else:
            text_of[stack[-1]].append(token)
    return [(kind, name, header, "".join(text_of[index])) for index, (kind, name, header) in enumerate(found)], "".join(
        text_of[None]
    )


def kebab(name):
    """ArgumentParser's long name for a property: `keyFile` → `key-file`, `serverURL` → `server-url`."""
    words = re.findall(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+", name)
    return "-".join(word.lower() for word in words)


def balanced(text, start):
    """The text from `start` (an opening parenthesis) to its closing one, inclusive."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] in "([":
            depth += 1
        elif text[index] in ")]":
            depth -= 1
            if depth == 0:
                return text[start : index + 1]
    return text[start:]


class CommandLine:
    """A tool's commands and flags, from its ArgumentParser declarations."""

    def __init__(self, folder):
        self.flags = set()
        self.commands = {}  # qualified struct name → (command name, [subcommand struct names])
        self.aliases = {}  # qualified struct name → the other names it answers to (`aliases:`)
        self.root = None
        for path in swift_files(folder):
            if "import ArgumentParser" in open(path, encoding="utf-8").read():
                self.flags |= {"--help", "-h"}
            source = open(path, encoding="utf-8").read()
            code, literals = strip_swift(source)
            self.flags |= {literal for literal in literals if re.fullmatch(r"--[a-z][a-z0-9-]*", literal)}
            # Keep literal contents for the names inside attributes: re-strip with literals kept.
            code_with_strings = re.sub(r"//[^\n]*", "", source)
            for attribute in re.finditer(r"@(Option|Flag)\b", code_with_strings):
                rest = code_with_strings[attribute.end() :]
                arguments = balanced(rest, 0) if rest.startswith("(") else ""
                after = rest[len(arguments) :]
                property = re.match(r"\s*(?:private\s+)?var\s+(\w+)", after)
                if not property:
                    continue
                longs = re.findall(r'\.customLong\("([^"]+)"', arguments)
                if longs:
                    names = longs
                elif re.search(r"name:\s*\.short\b", arguments):
                    names = []
                else:
                    names = [kebab(property.group(1))]
                for name in names:
                    self.flags.add("--" + name)
                    if ".prefixedNo" in arguments:
                        self.flags.add("--no-" + name)
                    if ".prefixedEnableDisable" in arguments:
                        self.flags |= {"--enable-" + name, "--disable-" + name}
            found, _ = scopes(code_with_strings)
            for kind, name, header, own in found:
                if kind != "struct" or "ParsableCommand" not in header:
                    continue
                configuration = own.find("CommandConfiguration(")
                block = balanced(own, own.find("(", configuration)) if configuration >= 0 else ""
                command = re.search(r'commandName:\s*"([^"]+)"', block)
                subcommands = re.search(r"subcommands:\s*\[([^\]]*)\]", block)
                self.commands[name] = (
                    command.group(1) if command else kebab(name.split(".")[-1]),
                    re.findall(r"(\w+)\.self", subcommands.group(1)) if subcommands else [],
                )
                aliases = re.search(r"aliases:\s*\[([^\]]*)\]", block)
                self.aliases[name] = re.findall(r'"([^"]+)"', aliases.group(1)) if aliases else []
                if re.search(r"@main\s+struct\s+" + re.escape(name) + r"\b", source):
                    self.root = name

    def subcommands(self, qualified):
        """Command name → qualified struct, for a command's subcommands."""
        children = {}
        for child in self.commands.get(qualified, ("", []))[1]:
            resolved = qualified + "." + child if qualified + "." + child in self.commands else child
            if resolved in self.commands:
                for name in [self.commands[resolved][0]] + self.aliases.get(resolved, []):
                    children[name] = resolved
        return children


def test_names():
    names = set()
    for path in swift_files("Tests", "Server/Tests"):
        code, _ = strip_swift(open(path, encoding="utf-8").read())
        names |= set(re.findall(r"\b(?:struct|class|enum|func)\s+(\w+)", code))
    return names


def target_names():
    names = set()
    for manifest in ("Package.swift", "Server/Package.swift", "Examples/OneFileGame/Package.swift"):
        if os.path.exists(os.path.join(ROOT, manifest)):
            names |= set(
                re.findall(
                    r'\.(?:target|executableTarget|testTarget|systemLibrary|library|executable|trait)\(\s*name:\s*"([^"]+)"',
                    read(manifest),
                )
            )
    return names


def declared_names(folders):
    """Names declared in `folders`' Swift, and the identifiers their string literals hold (a
    save's field names, a tool's JSON keys); and, apart, what they add to types they extend."""
    names, literal_words, added = set(), set(), {}
    for path in swift_files(*folders):
        code, literals = strip_swift(open(path, encoding="utf-8").read())
        for literal in literals:
            literal_words |= set(re.findall(r"(?<![\\\w$])[A-Za-z_]\w*", literal)) if re.fullmatch(r"[\w.]+", literal) else set()
        found, top = scopes(code)
        for kind, name, _, own in found:
            declared = set(re.findall(r"\b(?:func|var|let|case|typealias|struct|class|enum|protocol|actor)\s+(\w+)", own))
            declared |= {name.split(".")[-1]} if kind != "extension" else set()
            if kind == "extension":
                added.setdefault(name, set()).update(declared)
            else:
                names |= declared
        names |= set(re.findall(r"\b(?:func|var|let|case|typealias|struct|class|enum|protocol|actor)\s+(\w+)", top))
    return names, literal_words, added


def server_public_names():
    """The Server package's public declarations (the docs stage does not build Server/)."""
    names = set()
    for path in swift_files("Server/Sources/StasisServer", "Server/Sources/StasisSimulation"):
        code, _ = strip_swift(open(path, encoding="utf-8").read())
        names |= set(
            re.findall(
                r"\bpublic\s+(?:final\s+|static\s+|mutating\s+|nonisolated\s+)*(?:func|var|let|struct|class|enum|protocol|actor|typealias|case)\s+(\w+)",
                code,
            )
        )
    return names


def openapi_names():
    path = os.path.join(ROOT, "docs/openapi.yaml")
    if not os.path.exists(path):
        return set()
    return set(re.findall(r"^\s*([A-Za-z_]\w*):", open(path, encoding="utf-8").read(), re.M))


def load_allowlist():
    entries = {}
    for number, line in enumerate(read("scripts/docs-allowlist.txt").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        if not reason.strip():
            fail("scripts/docs-allowlist.txt", number, f"`{name}` has no reason")
        entries[name] = reason.strip()
    return entries


# ─── Markdown: code spans, fences, links, headings ─────────────────────────────────────────


def without_fences(text):
    """The text with fenced code blocks blanked (line numbers kept), and the blocks: (language,
    first line number, body)."""
    lines, blocks, fence, start, language, body = text.split("\n"), [], None, 0, "", []
    for number, line in enumerate(lines):
        match = re.match(r"^\s*(```+|~~~+)\s*([\w+-]*)", line)
        if fence is None and match:
            fence, start, language, body = match.group(1), number + 1, match.group(2), []
            lines[number] = ""
        elif fence is not None:
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                blocks.append((language, start, "\n".join(body)))
                fence = None
            else:
                body.append(line)
            lines[number] = ""
    return "\n".join(lines), blocks


def code_spans(text):
    """CommonMark code spans: (content, backtick count, offset)."""
    spans, index = [], 0
    while True:
        match = re.compile(r"`+").search(text, index)
        if not match:
            return spans
        run = match.group(0)
        closing = re.compile(r"(?<!`)" + run + r"(?!`)").search(text, match.end())
        if not closing:
            index = match.end()
            continue
        content = text[match.end() : closing.start()].replace("\n", " ")
        if content.startswith(" ") and content.endswith(" ") and content.strip():
            content = content[1:-1]
        spans.append((content.replace("\\|", "|"), len(run), match.start()))
        index = closing.end()


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def slug(heading):
    """GitHub's anchor for a heading."""
    heading = re.sub(r"`([^`]*)`", r"\1", heading)
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    heading = re.sub(r"[*_]{1,2}([^*_]+)[*_]{1,2}", r"\1", heading).strip().lower()
    kept = []
    for character in heading:
        category = unicodedata.category(character)
        if character in "-_ " or category[0] in "LN" or category == "Mn":
            kept.append(character)
    return "".join(kept).replace(" ", "-")


def anchors(path):
    text, _ = without_fences(read(path))
    seen, result = {}, set()
    for match in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    for match in re.finditer(r'<a\s+(?:name|id)="([^"]+)"', text):
        result.add(match.group(1))
    return result


def check_links(paths):
    checked = 0
    for path in paths:
        text = read(path)
        prose, _ = without_fences(text)
        # Links inside code spans are not links.
        for content, ticks, offset in code_spans(prose):
            prose = prose[:offset] + " " * (len(content) + 2 * ticks) + prose[offset + len(content) + 2 * ticks :]
        targets = [(m.group(1), m.start()) for m in re.finditer(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", prose)]
        targets += [(m.group(1), m.start()) for m in re.finditer(r"^\s*\[[^\]]+\]:\s*(\S+)", prose, re.M)]
        for target, offset in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, doc:
                continue
            checked += 1
            file, _, anchor = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(os.path.join(ROOT, resolved)):
                fail(path, line_of(text, offset), f"link to {target}: no file {resolved}")
                continue
            if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
                fail(path, line_of(text, offset), f"link to {target}: {resolved} has no heading #{anchor}")
    return checked


# ─── Identifiers ───────────────────────────────────────────────────────────────────────────

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
TYPE_KINDS = ("swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias")
KEYWORDS = {
    "try", "await", "import", "let", "var", "in", "as", "is", "self", "Self", "true", "false", "nil", "return",
    "throws", "throw", "func", "static", "some", "any", "if", "else", "guard", "case", "init", "for", "while", "do",
    "struct", "class", "enum", "extension",
}
TOOLS = {
    "stasis": "Sources/Tools/stasis",
    "stasis-demo": "Demo/stasis-demo",
    "stasis-bench": "Sources/Tools/stasis-bench",
    "stasis-fuzz": "Sources/Tools/stasis-fuzz",
    "stasis-fuzz-state": "Sources/Tools/stasis-fuzz-state",
    "stasis-example-tanks": "Examples/Tanks",
    "stasis-server": "Server/Sources/stasis-server",
    "stasis-load": "Server/Sources/stasis-load",
    "stasis-sim": "Server/Sources/stasis-sim",
    "stasis-sync-bench": "Server/Sources/stasis-sync-bench",
}


class Checker:
    def __init__(self, index):
        self.index = index
        self.tools = {name: CommandLine(folder) for name, folder in TOOLS.items()}
        self.all_flags = set().union(*(tool.flags for tool in self.tools.values()))
        self.tests = test_names()
        self.targets = target_names()
        self.server = server_public_names()
        examples, example_literals, added = declared_names(["Examples"])
        demo, demo_literals, _ = declared_names(["Demo/StasisDemoGame"])
        _, test_literals, _ = declared_names(["Tests", "Server/Tests"])
        # The examples', the demo's and the tests' games' own names and field names.
        self.game_names = examples | example_literals | demo | demo_literals | test_literals
        for extended, members in added.items():  # what the examples add to their own types
            if extended.split(".")[0] not in index.library_types:
                self.game_names |= members
        # What the examples add to the library's own types: a reader would look for it in the library.
        self.added_to_library = {
            name: sorted(members) for name, members in added.items() if name.split(".")[0] in index.library_types
        }
        _, tool_literals, _ = declared_names(
            [folder for folder in TOOLS.values() if not folder.startswith("Examples")]
            + ["Server/Sources/StasisServer", "Sources/Tools/StasisInspect"]
        )
        self.output_names = tool_literals | openapi_names()  # JSON keys and columns the tools print
        self.allowlist = load_allowlist()
        self.used_allowlist = set()
        self.stats = {}

    def count(self, kind):
        self.stats[kind] = self.stats.get(kind, 0) + 1
        if os.environ.get("DOCS_CHECK_TRACE"):
            print(f"  [{kind}] {self.current}")

    def allowed(self, name):
        for entry in self.allowlist:
            if entry == name or (entry.endswith("*") and name.startswith(entry[:-1])):
                self.used_allowlist.add(entry)
                return True
        return False

    # A chain: `Type.member`, `variable.member`, `.member`, `name`, each maybe called.
    def chain(self, components, written, leading_dot):
        """None when it resolves, else why not."""
        head, last = components[0], components[-1]
        full = ".".join(components)
        if self.allowed(full) or self.allowed(("." if leading_dot else "") + full) or self.allowed("." + last):
            return None
        if leading_dot:  # `.startOver`, `.signed(with:)`: a member of some type
            resolved, stale = verdict(self.index.by_name.get(last, []), written)
            return None if resolved else ("deprecated" if stale else f"no public member `{last}`")
        if head[0].isupper() or head in self.index.modules:
            key = full
            if head in self.index.modules:
                if len(components) == 1:
                    return None
                key = ".".join(components[1:])
            qualified = self.index.by_path.get(key, [])
            if not qualified and not key.split(".")[0] in self.index.top_level:
                # A nested type by its own name: `Verification.signature` is SaveFileFormat.Verification's.
                nested = [path for path in self.index.by_path if path.endswith("." + key)]
                if nested:
                    key, qualified = nested[0], [entry for path in nested for entry in self.index.by_path[path]]
            if qualified:
                if written is not None and any(entry["kind"] in TYPE_KINDS for entry in qualified):
                    inits = self.index.by_path.get(key + ".init", [])
                    if not inits and written == []:
                        return None
                    resolved, stale = verdict(inits, written)
                    if resolved:
                        return None
                    return "deprecated" if stale else f"no initializer `{full}({''.join(l + ':' for l in written)})`"
                resolved, stale = verdict(qualified, written)
                if resolved:
                    return None
                if stale:
                    return "deprecated"
                return f"no public `{full}" + (f"({''.join(l + ':' for l in written)})`" if written is not None else "`")
            if head in self.index.modules or head in self.index.top_level:
                return f"no public symbol `{full}`"
            if head in self.tests and all(part in self.tests for part in components):
                return None
            if full in self.targets or head in self.server and last in self.server:
                return None
            if head in self.game_names and len(components) == 1:
                return None  # the example's or the demo's own type
            if head in self.game_names:
                return None if last in self.game_names else f"no `{last}` in the example's `{head}`"
            return f"no public symbol `{full}`"
        # A variable's member (`coordinator.restoreFailure`) or a bare name (`listSlots()`).
        resolved, stale = verdict(self.index.by_name.get(last, []), written)
        if resolved:
            return None
        if written is None and len(components) > 1 and (last in self.game_names or last in self.output_names or last.isupper()):
            return None  # a save's field path or a tool's output path (`settings.map`, `restoredFrom.report`)
        if stale:
            return "deprecated"
        return f"no public member `{last}`" + (f" taking ({''.join(l + ':' for l in written)})" if written is not None else "")

    def expression(self, text):
        """Checks each chain in a Swift expression; the failures."""
        problems = []
        code = re.sub(r'"[^"]*"', '""', text)
        for match in re.finditer(r"(?<![\w.@$])(\.)?(" + IDENT + r"(?:\s*\.\s*" + IDENT + r")*)(\??\()?", code):
            leading_dot, components = bool(match.group(1)), re.split(r"\s*\.\s*", match.group(2))
            after = code[match.end() :]
            if components[0] in KEYWORDS and len(components) == 1 and not leading_dot:
                continue
            components = [part for part in components if part not in ("self", "Type")] or components
            if re.match(r"\s*:(?!:)", after) and not leading_dot and len(components) == 1:
                continue  # an argument label
            written = None
            if match.group(3):
                arguments = balanced(code, match.end() - 1)[1:-1]
                written = None if arguments.strip() in ("...", "…") else self.labels(arguments)
            elif not leading_dot and len(components) == 1 and not components[0][0].isupper():
                before = code[: match.start()]
                if re.search(r"[(,]\s*$|:\s*$|==\s*$|\?\s*$", before) or re.search(r"^\s*[,)]", after):
                    continue  # an argument's variable (`store.isSigned(slot)`)
                if re.search(r"\bin\s*$", code[: match.start()]) or not re.search(r"[A-Z(]", components[0]) and written is None:
                    continue  # a plain lowercase word: a variable
            why = self.chain(components, written, leading_dot)
            if why:
                problems.append(why)
        return problems

    @staticmethod
    def labels(arguments):
        """`as: T.self, 3` → ["as", "_"]; `named:` → ["named"]; `` → []."""
        if not arguments.strip():
            return []
        parts, depth, current = [], 0, ""
        for character in arguments:
            if character in "([{":
                depth += 1
            elif character in ")]}":
                depth -= 1
            if character == "," and depth == 0:
                parts.append(current)
                current = ""
            else:
                current += character
        parts.append(current)
        if re.fullmatch(r"\s*(?:(?:" + IDENT + r"|_):)+\s*", arguments):  # a signature: `generation:slot:`
            return re.findall(r"(" + IDENT + r"|_):", arguments)
        labels = []
        for part in parts:
            label = re.match(r"\s*(" + IDENT + r")\s*:(?!:)", part)
            labels.append(label.group(1) if label else "_")
        return labels

    def check_span(self, path, line, span, ticks):
        """The rules, in order:
        - ``Symbol/path`` (DocC): the symbol, with its labels, not deprecated.
        - `stasis …`, `stasis-server …`, … : each subcommand word is one of the tool's commands
          (from its ArgumentParser declarations) and each `--flag` one of the tool's flags.
        - `--flag …`: a flag some tool declares.
        - a Swift name or expression (`Type`, `Type.member`, `variable.member`, `.member`,
          `call()`, `call(_:)`, `Type.member(label:)`, `try SaveSlot(name)`, `x == .y`,
          `label: .value`): each name in it resolves —
            a type-headed chain to that public symbol of the library (with its labels; a
            deprecated one fails), else to a test, a target, the server's public API, or the
            example's or the demo's own types;
            a variable's member to a public member of any type, else to a field of the
            example's or the demo's state or a key of a tool's output (for a path);
            a leading-dot member to a public member of any type.
        - anything else is not an identifier: a path, a shell line, JSON, a number, an HTTP
          line, a lowercase word (a field, a key, a value, a C call), an ALL_CAPS name.
        The allowlist (Swift's, Foundation's, other packages' names) resolves a name whole.
        """
        text = span.strip()
        self.current = text
        if ticks == 2 and any(path.startswith(catalog) for catalog in CATALOGS):  # a DocC symbol link
            self.count("DocC symbol links")
            components = [re.sub(r"\(.*$", "", part) for part in text.split("/")]
            if components == [components[0]] and components[0] in self.index.modules:
                return
            signature = re.search(r"\(([^()]*)\)$", text)
            written = re.findall(r"(" + IDENT + r"|_):", signature.group(1)) if signature else None
            components = components[1:] if components[0] in self.index.modules and len(components) > 1 else components
            qualified = self.index.by_path.get(".".join(components), [])
            resolved, stale = verdict(qualified, written) if written is not None else verdict(qualified, None)
            if not resolved:
                fail(path, line, f"``{text}``: " + ("deprecated" if stale else "no such public symbol"))
            return
        tokens = text.split()
        if tokens and tokens[0] in self.tools and re.search(r"[;(,]", text):
            self.count("skipped: paths, shell lines, JSON, numbers and output")  # a tool's output line
            return
        if tokens and tokens[0] in self.tools:
            self.count("tool commands")
            tool = self.tools[tokens[0]]
            node = tool.root
            for token in tokens[1:]:
                if token.startswith("-") or not re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", token):
                    break
                children = tool.subcommands(node) if node else {}
                if not children:
                    break
                for alternative in token.split("|"):
                    if alternative not in children:
                        fail(path, line, f"`{text}`: `{tokens[0]}` has no command `{alternative}`")
                node = children.get(token.split("|")[0])
            for token in tokens[1:]:
                flag = re.match(r"--[a-z][a-z0-9-]*", token)
                if flag and flag.group(0) not in tool.flags:
                    fail(path, line, f"`{text}`: `{tokens[0]}` has no flag `{flag.group(0)}`")
            return
        if text.startswith("--"):
            self.count("flags")
            for token in tokens:
                flag = re.match(r"--[a-z][a-z0-9-]*", token)
                if flag and flag.group(0) not in self.all_flags:
                    fail(path, line, f"`{text}`: no tool has the flag `{flag.group(0)}`")
            return
        if self.allowed(text):
            self.count("allowlisted")
            return
        if (
            re.fullmatch(r"[\w+.-]+\.(swift|md|json|resolved|ya?ml|py|sh|png|txt|stasis|key|sqlite|bmp|h|c)", text)
            or re.fullmatch(r"\.[a-z]+", text)
            and os.path.exists(os.path.join(ROOT, text))
            or text == "_"
        ):
            self.count("skipped: paths, shell lines, JSON, numbers and output")  # a file name
            return
        if re.fullmatch(IDENT, text):
            if re.fullmatch(r"[a-z][a-z0-9]*", text):  # a plain word: a field, a key, a value, a C call
                candidates = self.index.by_name.get(text, [])
                if candidates and all(entry["deprecated"] for entry in candidates):
                    fail(path, line, f"`{text}`: deprecated")
                self.count("skipped: plain lowercase words (fields, keys, values, C calls)")
                return
            if re.fullmatch(r"[A-Z][A-Z0-9_]*|SDL_\w+", text):  # C and environment names
                self.count("skipped: C and environment names")
                return
            self.count("names")
            if text[0].islower():  # `autosaveInterval`, `backgroundEpisodes`
                resolved, stale = verdict(self.index.by_name.get(text, []), None)
                if resolved or text in self.game_names or text in self.output_names or text in self.tests:
                    return
                fail(path, line, f"`{text}`: " + ("deprecated" if stale else "no public member, field or output key of that name"))
                return
        elif re.fullmatch(r"@" + IDENT, text):
            self.count("names")
            fail(path, line, f"`{text}`: an attribute not in the allowlist")
            return
        elif self.is_swift(text):
            self.count("Swift expressions" if not re.fullmatch(r"\.?" + IDENT + r"(\." + IDENT + r")*(\(.*\))?[?!]?", text) else "names")
        else:
            self.count("skipped: paths, shell lines, JSON, numbers and output")
            return
        for why in self.expression(text):
            fail(path, line, f"`{text}`: {why}")

    @staticmethod
    def is_swift(text):
        """Whether a span with more than a name is Swift: a chain, maybe called; `try`/`import`
        a chain; a comparison or assignment of chains; `label: value` with a Swift value."""
        chain = r"\.?" + IDENT + r"(?:\." + IDENT + r")*(?:\(.*\))?[?!]?"
        if re.fullmatch(chain, text):
            return not re.search(r"[/\\]|\.\.", text)
        if re.fullmatch(r"(?:try|import|await)\s+" + chain, text):
            return True
        if re.fullmatch(r"\[" + IDENT + r"(?::\s*" + IDENT + r")?\]", text):  # `[UInt8]`, `[String: Int]`
            return True
        if re.fullmatch(r"(?:struct|class|enum|extension)\s+" + IDENT + r"\s*:\s*" + IDENT + r"(?:,\s*" + IDENT + r")*", text):
            return True
        if re.fullmatch(chain + r"(?:\s*==\s*|\s+=\s+)[^-]+", text) and not re.match(r"[A-Z][A-Z0-9_]*\b", text):
            return True
        if re.fullmatch(chain + r"\s*\{.*\}", text):
            return True
        value = re.fullmatch(IDENT + r"\s*:\s+(.+)", text)
        if value:
            return bool(re.fullmatch(r"\.\w.*|true|false|nil|\[\w*\]|\[\]|[A-Z]\w*[?!]?|\[[A-Z]\w*\]", value.group(1)))
        return False

    def check_swift_block(self, path, line, body):
        """A Swift block compiles (ReadmeTests and GuideTests); what the compiler cannot say is
        whether each name is the library's: one the examples add to a library type
        (`app.roundTripToBackground()`) is not, and a deprecated one must not be shown."""
        code, _ = strip_swift(body)
        for number, text in enumerate(code.split("\n")):
            for match in re.finditer(r"(?<![\w.])([A-Z]\w*)", text):
                self.current = match.group(1)
                self.count("names in Swift blocks")
                candidates = self.index.by_path.get(match.group(1), [])
                if candidates and all(entry["deprecated"] for entry in candidates):
                    fail(path, line + number + 1, f"`{match.group(1)}` in a Swift block: deprecated")
            for match in re.finditer(r"\.\s*(" + IDENT + r")", text):
                name = match.group(1)
                if re.match(r"\d", name):
                    continue
                self.current = name
                self.count("names in Swift blocks")
                for extended, members in self.added_to_library.items():
                    if name in members and not self.index.by_name.get(name):
                        fail(path, line + number + 1, f"`{name}` in a Swift block: the examples add it to `{extended}`; the library has no `{extended}.{name}`")
                candidates = self.index.by_name.get(name, [])
                if candidates and all(entry["deprecated"] for entry in candidates) and not self.allowed("." + name):
                    fail(path, line + number + 1, f"`{name}` in a Swift block: deprecated")

    def check_file(self, path):
        text = read(path)
        prose, blocks = without_fences(text)
        for content, ticks, offset in code_spans(prose):
            self.check_span(path, line_of(prose, offset), content, ticks)
        for language, start, body in blocks:
            if language == "swift":
                self.check_swift_block(path, start, body)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    index = SymbolIndex(sys.argv[1])

    print("public symbols (each module's own, and its members of other modules' types):")
    for module in LIBRARY:
        print(f"  {module:<14} {index.counts[module]:>5}")
    print(f"  {'total':<14} {sum(index.counts[module] for module in LIBRARY):>5}")

    landing = read(f"{CATALOG}/Stasis.md")
    missing = sorted(name for name in set(index.stasis_types) if "``" + name + "``" not in landing)
    for name in missing:
        fail(f"{CATALOG}/Stasis.md", 1, f"the landing page does not list ``{name}``")

    articles = sorted(
        os.path.relpath(path, ROOT) for catalog in CATALOGS for path in glob.glob(os.path.join(ROOT, catalog, "*.md"))
    )
    checker = Checker(index)
    for path in ["README.md"] + articles + GUIDES:
        checker.check_file(path)
    stats = checker.stats
    checked = sum(count for kind, count in stats.items() if not kind.startswith("skipped"))
    print(
        f"identifiers: {checked} checked in README.md, {len(articles)} articles in {len(CATALOGS)} catalogs and {len(GUIDES)} tool guides: "
        + ", ".join(f"{stats.get(kind, 0)} {kind}" for kind in ("names", "Swift expressions", "DocC symbol links", "tool commands", "flags", "allowlisted", "names in Swift blocks"))
        + f" (allowlist: {len(checker.allowlist)} entries); not identifiers, not checked: "
        + ", ".join(f"{count} {kind[9:]}" for kind, count in sorted(stats.items()) if kind.startswith("skipped"))
    )
    for entry in sorted(set(checker.allowlist) - checker.used_allowlist):
        fail("scripts/docs-allowlist.txt", 1, f"`{entry}` is not used: remove it")

    linked = ["README.md", "CHANGELOG.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs/*.md"))) + articles
    print(f"links: {check_links(linked)} relative links and anchors checked in {len(linked)} files")

    def order(failure):
        path, line, _ = failure.split(":", 2)
        return path, int(line)

    for line in sorted(failures, key=order):
        print(line)
    if failures:
        sys.exit(f"docs: {len(failures)} failures")


if __name__ == "__main__":
    main()
