"""Include directives: the text a docs site renders where a page names another file.

MkDocs' markdown-include writes `{!docs/errors.md!}`, pymdownx.snippets `--8<-- "errors.md"`
(or a block of file names between two `--8<--` lines), Jekyll `{% include_relative errors.md %}`
and MyST a fence whose info is `{include} errors.md` (or `{literalinclude} example.yaml`, shown
as code); the site shows the named file's text in their place. A section whose text is such a
line holds, for a reader, what that file says, and search should find it there:
`Includes.text()` gives the files' text for the index (its row of section_includes, read as
`sections_full.included` and searched with the section's text). The section's body stays as
written, with its line numbers.

A name is looked up as the sites do, from the project's folder: the source root, then the
including file's folder, then the root's parent (a build of `docs/` whose pages name
`docs/x.md`), and never outside the source root (a link out of it, `../../etc/passwd` or a
symbolic link, is left unread). A directive shows what the site shows of the file (`select`):
a snippet's lines (`:3:9`, `:3`, `::9`, from the end when negative, several after commas) or
section (`:install`, the lines between `--8<-- [start:install]` and `--8<-- [end:install]`),
markdown-include's `lines=2 7-9`, a MyST include's `:start-line:`, `:end-line:`, `:start-after:`
and `:end-before:` (a literalinclude's `:lines:`, `:start-at:`, `:end-at:` ...), else the whole
file less its sections' start and end lines; a selection that shows nothing (lines past the
end) counts as no include. Nested includes are
read three deep; a file already on the way in is not read again (a cycle ends there). A
document takes at most 16 times its own size of included text, at least 64 KiB and at most
1 MiB (its sections in order; what is left over is cut): a page of include lines cannot make the
index grow by more than that; and a document's first MAX_NAMES distinct names are looked up, no
more (a page names a handful; 100,000 names of missing files took 3 s); and it reads at most
READS bytes of them. A name that cannot be read is left out, as the sites leave it (MkDocs warns;
the page still renders).

The files are a folder on disk (`Folder`) or, for a `github:` source, the files its download
holds in memory (`Files`: the markdown its selection fetched, and the files below its PATH that
those pages' directives name, a YAML snippet, kept from the same download), looked up by the
same rules.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

MAX_DEPTH = 3
# of included text per document: GROWTH times its own size, within these bounds
MIN_BYTES = 64 * 1024
MAX_BYTES = 1 << 20
GROWTH = 16
MAX_NAMES = 1000  # distinct names looked up per document
# what a document may read, in bytes, a read counting READ_COST at least: a selection reads its
# whole file (up to MAX_BYTES) for a line of it, and a page may name one line of a big file, or
# a one-byte file, a hundred thousand times over
READS = 32 * MAX_BYTES
READ_COST = 4096

# markdown-include's syntax, an optional lines=... selection after the name (lines and ranges,
# 1-based, in the order shown: "lines=1 3 8-10 2")
_MKDOCS = re.compile(r"\{!\s*([^!{}\r\n]+?)\s*!(?:lines=([0-9 -]*))?\}")
# pymdownx.snippets: `--8<-- "name"` on a line of its own (a leading `;` escapes it), and the
# block form: a bare `--8<--` line, names one a line, a bare `--8<--` line
_SNIPPET = re.compile(r"""^[ \t]*(;*)-+8<-+[ \t]+(?:"([^"\r\n]+)"|'([^'\r\n]+)')[ \t]*$""", re.M)
_FENCE = re.compile(r"^[ \t]*(;*)-+8<-+[ \t]*$")
# A snippet name's section suffix (`:install`: the lines between a `--8<-- [start:install]` line
# and a `--8<-- [end:install]` line of the file); its lines suffix is read by _suffix_at
_SECTION_NAME = re.compile(r"(?i)[a-z][-_0-9a-z]*")
_LINE_CHARS = frozenset("-0123456789:,")
_INTEGER = re.compile(r"-?[0-9]+")
# Jekyll's `{% include_relative x.md %}` (a Liquid variable for a name is not read)
_JEKYLL = re.compile(r"\{%-?[ \t]*include_relative[ \t]+([^\s%{}]+)[^%}\r\n]*?-?%\}")
# MyST's include directive (Sphinx, Jupyter Book): a fence of backticks, tildes or colons whose
# info is `{include} name`, then its options, a `:name: value` a line
# (the name and an option's value are stripped in Python: a lazy group before `[ \t]*$` is
# quadratic in a run of spaces)
_MYST = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})[ \t]*\{(include|literalinclude)\}[ \t]+(\S[^\r\n]*)")
_MYST_OPTION = re.compile(r"^[ \t]*:([a-z-]+):([^\r\n]*)")
# a section's start or end line (`--8<-- [start:install]`; those lines are not shown), found from
# its 8< (a pattern that starts with the line's dashes is quadratic in a run of them); _mark
# reads the `;` that escapes it before the dashes
_SECTION_MARK = re.compile(r"(?i)(?<=-)8<-+[ \t]+\[[ \t]*(start|end)[ \t]*:[ \t]*([a-z][-_0-9a-z]*)[ \t]*\]")


# What every directive holds (markdown-include, snippets, Jekyll, MyST): a text without any of
# them has none
_MARKERS = ("{!", "8<-", "include_relative", "include}")
_BYTE_MARKERS = tuple(m.encode() for m in _MARKERS)


def has_includes(text: str) -> bool:
    """Whether `text` may hold a directive (a cheap test before any parsing)."""
    return any(m in text for m in _MARKERS)


def may_include(data: bytes) -> bool:
    """has_includes for a file's bytes."""
    return any(m in data for m in _BYTE_MARKERS)


def names(text: str) -> list[str]:
    """The file names `text`'s directives include, in the order they stand."""
    return [name for _, name, _ in directives(text)]


@dataclass(slots=True)
class Myst:
    """A MyST include (`literal`: a literalinclude, a file shown as code) and its options
    ({"start-line": "2", "end-before": "<!-- end -->"})."""

    literal: bool
    options: dict[str, str]


# What a directive shows of its file, besides a snippet name's suffix: markdown-include's lines=
# ("2 7-9"), or a MyST include
Pick = str | Myst | None


def directives(text: str) -> list[tuple[int, str, Pick]]:
    """Each directive's (offset in `text`, file name, Pick), in the order they stand."""
    found: list[tuple[int, str, Pick]] = [(m.start(), m.group(1), m.group(2)) for m in _MKDOCS.finditer(text)]
    found += [(m.start(), m.group(2) or m.group(3), None) for m in _SNIPPET.finditer(text) if not m.group(1)]
    if "include_relative" in text:
        found += [(m.start(), m.group(1), None) for m in _JEKYLL.finditer(text)]
    if "8<-" in text or "include}" in text:
        offset, block, escaped = 0, False, False
        myst: Myst | None = None  # the MyST include just opened, its options read below it
        for line in text.splitlines(keepends=True):
            fence = _FENCE.match(line)
            option = _MYST_OPTION.match(line) if myst is not None else None
            if myst is not None and option is not None:
                myst.options[option.group(1)] = option.group(2).strip()
            else:
                opened = _MYST.match(line) if "include}" in line else None
                myst = None if opened is None else Myst(opened.group(1) == "literalinclude", {})
                if opened is not None:
                    found.append((offset, opened.group(2).rstrip(), myst))
            if fence:
                block, escaped = not block, bool(fence.group(1))
            elif block and not escaped and line.strip() and not line.lstrip().startswith(";"):
                found.append((offset, line.strip(), None))
            offset += len(line)
    return sorted(found, key=lambda d: d[0])


def select(text: str, suffix: str | None, pick: Pick, limit: int = MAX_BYTES) -> str:
    """The part of an included file's `text` a directive shows: a snippet's `suffix` (see
    _suffix_at; its colon first), markdown-include's lines or a MyST include's options (`pick`);
    the whole text less any section's start and end lines when it names none. Lines named again
    and again stop past `limit` characters (a 1 MB list of `1-99999` would be the file many
    thousand times over)."""
    if isinstance(pick, Myst):
        return _literal(text, pick.options, limit) if pick.literal else _myst(text, pick.options)
    rows = text.split("\n")
    if pick is not None and pick.strip():
        return "\n".join(_gather((rows[max(int(first) - 1, 0):int(last or first)]
                                  for first, _, last in (part.partition("-") for part in pick.split())
                                  if first.isdigit() and (not last or last.isdigit())), limit))
    if suffix and suffix[1:2].isalpha():
        return _section(rows, suffix[1:])
    if suffix:
        return "\n".join(_gather((rows[slice(*_span(span, len(rows)))] for span in suffix[1:].split(",")), limit))
    if "8<-" not in text:
        return text
    return "\n".join(shown for shown, _ in map(_mark, rows) if shown is not None)


def _suffix_at(name: str) -> int | None:
    """Where a snippet name's suffix starts (None: it has none), as pymdownx.snippets' pattern
    `(.*?)(?:LINES|:SECTION)?$` finds it, the earliest place from which the rest is one: LINES
    one or two `:number`s, then `,number` or `,number:number` groups (a number: an optional -
    and digits, maybe none; a comma followed by one of -0-9:). Read from the right in linear
    time: that pattern backtracks quadratically in a long run of groups."""
    section = name.rfind(":")
    first = section if section >= 0 and _SECTION_NAME.fullmatch(name, section + 1) else None
    tail = len(name)
    while tail > 0 and name[tail - 1] in _LINE_CHARS:
        tail -= 1
    if ":" not in name[tail:]:
        return first
    # groups[i]: name[i:] (i a comma, or the end) is a run of comma groups
    groups = {len(name): True}
    for i in range(len(name) - 1, tail - 1, -1):
        if name[i] == "," and i + 1 < len(name) and name[i + 1] in "-0123456789:":
            j = _number(name, i + 1)
            if j < len(name) and name[j] == ":":
                j = _number(name, j + 1)
            groups[i] = groups.get(j, False)
    for p in range(tail, len(name)):
        if name[p] == ":":
            j = _number(name, p + 1)
            if groups.get(j, False) or (j < len(name) and name[j] == ":" and groups.get(_number(name, j + 1), False)):
                return p if first is None else min(p, first)
    return first


def _number(name: str, i: int) -> int:
    """Where an optional - and digits from `i` end."""
    if i < len(name) and name[i] == "-":
        i += 1
    while i < len(name) and name[i] in "0123456789":
        i += 1
    return i


def _myst(text: str, options: dict[str, str]) -> str:
    """What a MyST include shows, as docutils reads its options: start-line and end-line (0-based,
    the end's line not shown), then the text after start-after's first place and before
    end-before's (none of it when the file does not hold the text: the site's build fails)."""
    def line(name: str) -> int | None:
        value = options.get(name, "").strip()
        return int(value) if _INTEGER.fullmatch(value) else None

    if line("start-line") is not None or line("end-line") is not None:
        text = "".join(text.splitlines(keepends=True)[line("start-line"):line("end-line")])
    after, before = options.get("start-after"), options.get("end-before")
    if after:
        at = text.find(after)
        text = "" if at < 0 else text[at + len(after):]
    if before:
        at = text.find(before)
        text = "" if at < 0 else text[:at]
    return text


def _span(span: str, total: int) -> tuple[int | None, int | None]:
    """A snippet's `start:end` (1-based, end shown, negative from the end) as a slice of `total` rows."""
    start, _, end = span.partition(":")
    a = int(start) if _INTEGER.fullmatch(start) else None
    b = int(end) if _INTEGER.fullmatch(end) else None
    return (None if a is None else max(total + a, 0) if a < 0 else max(a - 1, 0),
            None if b is None else max(total + 1 + b, 0) if b < 0 else b)


def _gather(parts: Iterable[list[str]], limit: int) -> list[str]:
    """The rows of `parts`, one after the other, until they pass `limit` characters."""
    picked: list[str] = []
    size = 0
    for rows in parts:
        picked += rows
        size += sum(map(len, rows))
        if size > limit:
            break
    return picked


def _literal(text: str, options: dict[str, str], limit: int) -> str:
    """What a MyST literalinclude shows, as Sphinx reads its options: from the first line holding
    start-at (or after the one holding start-after), to the next one holding end-at (or before
    end-before), then the 1-based `lines` of that ("1,3,5-10,20-"); nothing when a marker is
    not there (Sphinx fails the page)."""
    rows = text.splitlines(keepends=True)
    for at, past in (("start-at", 0), ("start-after", 1), ("end-at", 1), ("end-before", 0)):
        marker = options.get(at)
        if not marker:
            continue
        found = next((i for i, row in enumerate(rows) if marker in row), None)
        if found is None:
            return ""
        rows = rows[found + past:] if at.startswith("start") else rows[:found + past]
    if options.get("lines", "").strip():
        spans = (part.strip().partition("-") for part in options["lines"].split(","))
        rows = _gather((rows[max(int(first or "1") - 1, 0):int(last) if last else len(rows) if dash else int(first)]
                        for first, dash, last in spans
                        if _INTEGER.fullmatch(first or "1") and (not last or _INTEGER.fullmatch(last))), limit)
    return "".join(rows)


def _mark(row: str) -> tuple[str | None, re.Match[str] | None]:
    """A row as shown (None: a section's start or end line, not shown; an escaped one loses its
    `;`), and its match when it is such a line."""
    m = _SECTION_MARK.search(row) if "8<-" in row else None
    if m is None:
        return row, None
    dashes = len(row[:m.start()].rstrip("-"))  # where the dashes before the 8< start
    if row[:dashes].endswith(";"):
        return row[:dashes - 1] + row[dashes:], None
    return None, m


def _section(rows: list[str], name: str) -> str:
    """The lines between the section's start line and its end line (other sections' lines left out)."""
    picked: list[str] = []
    inside = False
    for row in rows:
        shown, m = _mark(row)
        if m is not None:
            if m.group(2) == name:
                if m.group(1).lower() == "end":
                    if inside:
                        break
                    return ""  # an end before its start: pymdownx stops there
                inside = True
        elif inside and shown is not None:
            picked.append(shown)
    return "\n".join(picked)


class Folder:
    """The files below `root`, a folder on disk; `base` is the folder the index names documents
    from (root's parent when it is one of several sources; default root). A file's key is its
    real path."""

    def __init__(self, root: Path | str, base: Path | str | None = None) -> None:
        self.root = os.path.realpath(root)
        self.base = self.root if base is None else os.path.realpath(base)

    def key(self, path: str) -> str:
        """The key of the document the index names `path`."""
        return self._inside(os.path.join(self.base, path)) or ""

    def of(self, path: str) -> str:
        """The `at` (see locate) of the document the index names `path`."""
        return path

    def locate(self, name: str, at: str) -> str | None:
        """The key of the file `name` (written in the file `at`) names, or None (see the module)."""
        for folder in (self.root, os.path.join(self.base, os.path.dirname(at)), os.path.dirname(self.root)):
            found = self._inside(os.path.join(folder, name.lstrip("/")))
            if found is not None and os.path.isfile(found):
                return found
        return None

    def _inside(self, filename: str) -> str | None:
        """The real path of `filename` when it is below the root, else None."""
        real = os.path.realpath(filename)
        return real if real.startswith(self.root + os.sep) else None

    def read(self, key: str, room: int) -> bytes | None:
        """At most room + 1 bytes of the file, or None when it cannot be read."""
        try:
            with open(key, "rb") as f:
                return f.read(room + 1)
        except OSError:
            return None

    def below(self, key: str) -> str:
        """The file's `at` (see locate), for the directives it holds: its path from base."""
        return os.path.relpath(key, self.base).replace(os.sep, "/")

    def path(self, key: str) -> str:
        """The file's path as the index names its document."""
        return self.below(key)


class Files:
    """Files held in memory (a `github:` source's download): `files` maps a path below the source's
    folder to its bytes; `folder` is that folder's path in the repository ("" for all of it), for
    the root's-parent lookup; `prefix` what the build puts before each document path ("" when it
    is the only source). A file's key is its path below the folder."""

    def __init__(self, files: Mapping[str, bytes], folder: str = "", prefix: str = "") -> None:
        self.files, self.folder, self.prefix = files, folder.strip("/"), prefix

    def key(self, path: str) -> str:
        return self.of(path)

    def of(self, path: str) -> str:
        return path[len(self.prefix) + 1:] if self.prefix and path.startswith(self.prefix + "/") else path

    def locate(self, name: str, at: str) -> str | None:
        name = name.lstrip("/")
        for candidate in (name, posixpath.join(posixpath.dirname(at), name)):
            path = posixpath.normpath(candidate)  # ("../x.md" stays outside: no key starts so)
            if path in self.files:
                return path
        if self.folder:  # the root's parent: a page of docs/ that names docs/x.md
            path = posixpath.normpath(posixpath.join(posixpath.dirname(self.folder), name))
            below = path[len(self.folder) + 1:] if path.startswith(self.folder + "/") else None
            if below is not None and below in self.files:
                return below
        return None

    def read(self, key: str, room: int) -> bytes | None:
        data = self.files.get(key)
        return None if data is None else data[:room + 1]

    def below(self, key: str) -> str:
        return key

    def path(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key


Tree = Folder | Files


class Includes:
    """Reads the files one document's directives name, below `root` (a folder on disk, or a Tree)."""

    def __init__(self, root: Path | str | Tree, path: str, size: int) -> None:
        self.tree: Tree = root if isinstance(root, (Folder, Files)) else Folder(root)
        self.path = self.tree.of(path)  # the including document, below the tree's root
        self.room = min(MAX_BYTES, max(MIN_BYTES, GROWTH * size))  # bytes left for this document
        self.reads = READS  # bytes it may still read (see READS)
        # (name, folder it was written in) → (key, snippet suffix)
        self._found: dict[tuple[str, str], tuple[str | None, str | None]] = {}

    def text(self, body: str) -> tuple[str, tuple[str, ...]] | None:
        """The text of the files `body` (one section of the document) includes, nested includes
        in their place, one after the other, and those files (as the index names them, in the
        order read); None when it names none that can be read."""
        parts: list[str] = []
        files: list[str] = []
        self._add(body, self.path, {self.tree.key(self.path)}, 1, parts, files)
        return ("\n".join(parts), tuple(files)) if parts else None

    def _add(self, text: str, at: str, seen: set[str], depth: int, parts: list[str], files: list[str]) -> None:
        for _, name, pick in directives(text):
            if self.room <= 0:
                return
            found, suffix = self._resolve(name, at)
            if found is None or found in seen:
                continue
            # (a selection may stand past the room's bytes of a big file: it reads up to MAX_BYTES)
            data = self._read(found, MAX_BYTES if suffix or pick else self.room)
            if data is None:
                continue
            data = select(data, suffix, pick, self.room)
            if (suffix or pick) and not data.strip():
                continue  # (lines past the file's end, a section it does not hold: the site shows nothing)
            data = data.encode("utf-8", "surrogatepass")[:self.room].decode("utf-8", "ignore")
            self.room -= len(data.encode("utf-8", "surrogatepass"))
            parts.append(data)
            rel = self.tree.path(found)
            if rel not in files:  # (a file shown twice is one file to read)
                files.append(rel)
            if depth < MAX_DEPTH and has_includes(data):
                self._add(data, self.tree.below(found), seen | {found}, depth + 1, parts, files)

    def shows_nothing(self, name: str, pick: Pick, at: str) -> bool:
        """Whether the file a directive names is there but the lines or section it asks for are
        not (the site shows nothing of it)."""
        found, suffix = self._resolve(name, at)
        if found is None or not (suffix or pick):
            return False
        data = self._read(found, MAX_BYTES)
        return data is not None and not select(data, suffix, pick).strip()

    def find(self, name: str, at: str) -> str | None:
        """The key of the file `name` (written in the file `at`, relative to the root) names, as
        the sites look it up; None when there is none below the root, or when this document has
        looked up MAX_NAMES others already."""
        return self._resolve(name, at)[0]

    def _resolve(self, name: str, at: str) -> tuple[str | None, str | None]:
        """find's key, and the snippet suffix the name ends with when the file is named without it."""
        key = (name, os.path.dirname(at))
        if key not in self._found:
            self._found[key] = self._look_up(name, at) if len(self._found) < MAX_NAMES else (None, None)
        return self._found[key]

    def _look_up(self, name: str, at: str) -> tuple[str | None, str | None]:
        name = name.replace("\\", "/")
        if name.startswith(("http://", "https://")):
            return None, None
        found = self.tree.locate(name, at)
        if found is not None:
            return found, None
        # a snippet's section or lines (`errors.md:fix`, `errors.md:3:9`), when the name with
        # them is no file
        at_suffix = _suffix_at(name)
        base = name[:at_suffix].strip() if at_suffix is not None else ""
        if base:
            found = self.tree.locate(base, at)
            if found is not None:
                return found, name[at_suffix:]
        return None, None

    def _read(self, key: str, room: int) -> str | None:
        if self.reads <= 0:
            return None
        data = self.tree.read(key, room)
        self.reads -= max(len(data or b""), READ_COST)
        if data is None or b"\0" in data:
            return None  # unreadable, or not text
        # (read as a page is: BOM dropped, CRLF and CR as LF, so a selection's lines are the
        # page's lines and no carriage return reaches the index. Imported here: mdfts.sections
        # brings the parser, which discover, importing this module, does not need)
        from mdfts.sections import normalize_text

        return normalize_text(data[:room].decode("utf-8", "ignore"))
