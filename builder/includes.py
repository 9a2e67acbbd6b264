"""Include directives: the text a docs site renders where a page names another file.

MkDocs' markdown-include writes `{!docs/errors.md!}` and pymdownx.snippets `--8<-- "errors.md"`
(or a block of file names between two `--8<--` lines); the site shows the named file's text in
their place. A section whose text is such a line holds, for a reader, what that file says, and
search should find it there: `Includes.text()` gives the files' text for the index (its row of
section_includes, read as `sections_full.included` and searched with the section's text). The
section's body stays as written, with its line numbers.

A name is looked up as the sites do, from the project's folder: the source root, then the
including file's folder, then the root's parent (a build of `docs/` whose pages name
`docs/x.md`), and never outside the source root (a link out of it, `../../etc/passwd` or a
symbolic link, is left unread). A snippet's `:section` or `:start:end` suffix reads the whole
file. Nested includes are read three deep; a file already on the way in is not read again (a
cycle ends there). A document takes at most 16 times its own size of included text, at least
64 KiB and at most 1 MiB (its sections in order; what is left over is cut): a page of include
lines cannot make the index grow by more than that; and a document's first MAX_NAMES distinct
names are looked up, no more (a page names a handful; 100,000 names of missing files took 3 s).
A name that cannot be read is left out, as the sites leave it (MkDocs warns; the page still
renders).

The files are a folder on disk (`Folder`) or, for a `github:` source, the files its download
holds in memory (`Files`: the markdown its selection fetched; a file it left out, a YAML snippet,
is not read), looked up by the same rules.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path

MAX_DEPTH = 3
# of included text per document: GROWTH times its own size, within these bounds
MIN_BYTES = 64 * 1024
MAX_BYTES = 1 << 20
GROWTH = 16
MAX_NAMES = 1000  # distinct names looked up per document

# markdown-include's syntax, an optional lines=... range after the name (read whole here)
_MKDOCS = re.compile(r"\{!\s*([^!{}\r\n]+?)\s*!(?:lines=[0-9 -]*)?\}")
# pymdownx.snippets: `--8<-- "name"` on a line of its own (a leading `;` escapes it), and the
# block form: a bare `--8<--` line, names one a line, a bare `--8<--` line
_SNIPPET = re.compile(r"""^[ \t]*(;*)-+8<-+[ \t]+(?:"([^"\r\n]+)"|'([^'\r\n]+)')[ \t]*$""", re.M)
_FENCE = re.compile(r"^[ \t]*(;*)-+8<-+[ \t]*$")


def has_includes(text: str) -> bool:
    """Whether `text` may hold a directive (a cheap test before any parsing)."""
    return "{!" in text or "8<-" in text


def may_include(data: bytes) -> bool:
    """has_includes for a file's bytes."""
    return b"{!" in data or b"8<-" in data


def names(text: str) -> list[str]:
    """The file names `text`'s directives include, in the order they stand."""
    return [name for _, name in directives(text)]


def directives(text: str) -> list[tuple[int, str]]:
    """Each directive's (offset in `text`, file name), in the order they stand."""
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in _MKDOCS.finditer(text)]
    found += [(m.start(), m.group(2) or m.group(3)) for m in _SNIPPET.finditer(text) if not m.group(1)]
    if "8<-" in text:
        offset, block, escaped = 0, False, False
        for line in text.splitlines(keepends=True):
            fence = _FENCE.match(line)
            if fence:
                block, escaped = not block, bool(fence.group(1))
            elif block and not escaped and line.strip() and not line.lstrip().startswith(";"):
                found.append((offset, line.strip()))
            offset += len(line)
    return sorted(found)


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
        """The path below the root of the document the index names `path`."""
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
        """The file's path as the index names its document (from base, "/" separators)."""
        return os.path.relpath(key, self.base).replace(os.sep, "/")

    def path(self, key: str) -> str:
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
        self._found: dict[tuple[str, str], str | None] = {}  # (name, folder it was written in) → key

    def text(self, body: str) -> tuple[str, tuple[str, ...]] | None:
        """The text of the files `body` (one section of the document) includes, nested includes
        in their place, one after the other, and those files (as the index names them, in the
        order read); None when it names none that can be read."""
        parts: list[str] = []
        files: list[str] = []
        self._add(body, self.path, {self.tree.key(self.path)}, 1, parts, files)
        return ("\n".join(parts), tuple(files)) if parts else None

    def _add(self, text: str, at: str, seen: set[str], depth: int, parts: list[str], files: list[str]) -> None:
        for name in names(text):
            if self.room <= 0:
                return
            found = self.find(name, at)
            if found is None or found in seen:
                continue
            data = self._read(found, self.room)
            if data is None:
                continue
            self.room -= len(data.encode("utf-8", "surrogatepass"))
            parts.append(data)
            rel = self.tree.path(found)
            if rel not in files:  # (a file shown twice is one file to read)
                files.append(rel)
            if depth < MAX_DEPTH and has_includes(data):
                self._add(data, self.tree.below(found), seen | {found}, depth + 1, parts, files)

    def find(self, name: str, at: str) -> str | None:
        """The key of the file `name` (written in the file `at`, relative to the root) names, as
        the sites look it up; None when there is none below the root, or when this document has
        looked up MAX_NAMES others already."""
        key = (name, os.path.dirname(at))
        if key not in self._found:
            self._found[key] = self._look_up(name, at) if len(self._found) < MAX_NAMES else None
        return self._found[key]

    def _look_up(self, name: str, at: str) -> str | None:
        name = name.replace("\\", "/")
        if name.startswith(("http://", "https://")):
            return None
        tries = [name]
        # a snippet's section or line range (`errors.md:fix`, `errors.md:3:9`), when the name
        # with it is no file
        base, _, _ = name.partition(":")
        if base and base != name:
            tries.append(base)
        for candidate in tries:
            found = self.tree.locate(candidate, at)
            if found is not None:
                return found
        return None

    def _read(self, key: str, room: int) -> str | None:
        data = self.tree.read(key, room)
        if data is None or b"\0" in data:
            return None  # unreadable, or not text
        text = data[:room].decode("utf-8", "ignore")
        return text.removeprefix("\ufeff")
