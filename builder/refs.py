"""Section references as printed and accepted everywhere: `12`, `path#anchor`, `path:line`, `path`."""

from __future__ import annotations

import functools
import re

from mdfts.errors import MdftsError
from mdfts.frozen import FrozenRecord

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, Literal

    RefKind = Literal["id", "anchor", "line", "path"]

# [0-9], not \d: "a.md:١٢" is a path, as "a.md:12a" is; \d (and int()) read any script's digits.
_LINE = r"^(?P<path>.+?):(?P<start>[0-9]+)(?:-(?P<end>[0-9]+))?$"  # compiled on first use (re caches it)


class RefError(MdftsError):
    """A reference names no section; the message lists the nearest anchors or paths."""


class Ref(FrozenRecord):
    """A parsed reference: its kind, the text as given, and the id, path, anchor or line it names."""

    __slots__ = ("kind", "text", "id", "path", "anchor", "line")
    kind: RefKind
    text: str
    id: int | None
    path: str
    anchor: str
    line: int | None

    def __init__(self, kind: RefKind, text: str, id: int | None = None, path: str = "", anchor: str = "",
                 line: int | None = None) -> None:
        self._fill(kind, text, id, path, anchor, line)


def parse_ref(ref: str | int) -> Ref:
    """`12` → id; `a/b.md#Roll-Back` → anchor; `a/b.md:83` or `a/b.md:83-103` → line; `a/b.md` → path.
    An int is an id (`show(hit.id)`)."""
    if isinstance(ref, int) and not isinstance(ref, bool):
        return Ref("id", str(ref), id=ref)
    if not isinstance(ref, str):
        raise RefError(f"a reference is a str or an int id, not {ref!r:.40}")
    text = ref.strip()
    if not text:
        raise RefError("empty reference; give an id, PATH#ANCHOR, PATH:LINE or PATH")
    if text.isascii() and text.isdecimal():  # not isdigit() ("²"), nor "١٢", which int() reads as 12
        return Ref("id", text, id=int(text))
    if "#" in text:
        path, _, anchor = text.partition("#")
        return Ref("anchor", text, path=_clean_path(path), anchor=anchor.strip())
    m = re.match(_LINE, text)
    if m:
        return Ref("line", text, path=_clean_path(m["path"]), line=int(m["start"]))
    return Ref("path", text, path=_clean_path(text))


def hash_readings(ref: Ref) -> list[Ref]:
    """Other readings of a PATH#ANCHOR reference whose file name may hold a '#' (`c#sharp.md#sub`,
    `c#sharp.md:5`, `c#sharp.md`), to try when the first names no document."""
    if ref.kind != "anchor":
        return []
    text = ref.text.strip()
    path, _, anchor = text.rpartition("#")
    out = [Ref("anchor", text, path=_clean_path(path), anchor=anchor.strip())]
    m = re.match(_LINE, text)
    if m:
        out.append(Ref("line", text, path=_clean_path(m["path"]), line=int(m["start"])))
    out.append(Ref("path", text, path=_clean_path(text)))
    return [r for r in out if r.path != ref.path]


def _clean_path(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.lstrip("/")


@functools.lru_cache(maxsize=64)  # one call a row of the document
def _slug(text: str) -> str:
    from mdfts.parse import slugify  # (markdown-it: only when the quicker readings miss)

    return slugify(text.strip())


def _hyphens(anchor: str) -> str:
    return re.sub("-+", "-", anchor.lower())


def pick_anchor(rows: Sequence[Mapping[str, Any]], anchor: str) -> Mapping[str, Any] | None:
    """The outline row for an anchor: exact, else case-insensitive, else as a heading's slug, else
    with each run of hyphens as one (MkDocs' slug of `with  Multiple`, where GitHub writes two).
    Percent-encoded, as a browser copies a fragment (`#%EF%B8%8F-licensing`), it is decoded first."""
    import urllib.parse

    anchor = urllib.parse.unquote(anchor)
    tests: list[Callable[[str], bool]] = [
        lambda a: a == anchor, lambda a: a.lower() == anchor.lower(), lambda a: a == _slug(anchor),
        lambda a: _hyphens(a) == _hyphens(anchor)]
    for test in tests:
        for row in rows:
            if test(row["anchor"]):
                return row
    return None


def pick_line(rows: Sequence[Mapping[str, Any]], line: int) -> Mapping[str, Any] | None:
    """The outline row whose lines hold `line`; before the first section, the first one; past the
    end, the last one that starts before it."""
    if not rows:
        return None
    holding = [r for r in rows if r["start_line"] <= line <= r["end_line"]]
    if holding:
        return holding[-1]
    before = [r for r in rows if r["start_line"] <= line]
    return before[-1] if before else rows[0]


def nearest(words: Sequence[str], word: str, n: int = 5) -> list[str]:
    """The closest few of `words` to `word` (by difflib), else the first few."""
    import difflib

    lowered = {w.lower(): w for w in words}
    close = difflib.get_close_matches(word.lower(), list(lowered), n=n, cutoff=0.4)
    return [lowered[w] for w in close] or list(words[:n])


def anchor_miss(ref: Ref, rows: Sequence[Mapping[str, Any]]) -> RefError:
    anchors = [r["anchor"] for r in rows if r["anchor"]]
    near = nearest(anchors, ref.anchor)
    if not near:
        return RefError(f"no section {ref.text!r}: {ref.path} has no headings")
    return RefError(f"no section {ref.text!r}; nearest anchors in {ref.path}: " + ", ".join(f"#{a}" for a in near))


def path_miss(ref: Ref, paths: Sequence[str]) -> RefError:
    near = nearest(paths, ref.path)
    hint = f"; nearest documents: {', '.join(near)}" if near else "; the index has no documents"
    return RefError(f"no document {ref.path!r} in this index{hint}")
