"""What changed between two indexes: documents, sections (by path + anchor) and exact tokens.

The comparisons are SQL (diff_*.sql beside this file) over both files attached read-only.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, TypedDict

from mdfts.artifact import load_sql
from mdfts.errors import IndexVersionError
from mdfts.index import connect


class DocumentChange(TypedDict):
    status: str  # added, removed or changed
    path: str
    old_sections: int | None
    new_sections: int | None


class SectionChange(TypedDict):
    status: str
    path: str
    anchor: str  # "" for the lead text before the first heading
    heading: str
    level: int
    old_lines: list[int] | None  # [start, end], 1-based and inclusive; None when added
    new_lines: list[int] | None
    included: bool  # changed only in the text of the files its include directives name


class Place(TypedDict):
    path: str
    anchor: str
    heading: str
    line: int


class TokenChange(TypedDict):
    status: str  # added to or removed from the documents in `places`
    token: str
    kind: str
    places: list[Place]
    other_documents: int  # added: documents that had it before (0: new); removed: that still have it


class Diff(TypedDict):
    old: str
    new: str
    summary: dict[str, dict[str, int]]  # documents/sections/tokens → added/removed/changed → count
    documents: list[DocumentChange]
    sections: list[SectionChange]
    tokens: list[TokenChange]


STATUSES = ("added", "removed", "changed")


def _rows(db: sqlite3.Connection, name: str) -> list[dict[str, Any]]:
    cur = db.execute(load_sql(name))
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur]


def _lines(start: int | None, end: int | None) -> list[int] | None:
    return None if start is None or end is None else [start, end]


def diff_indexes(old: Path, new: Path) -> Diff:
    """The documents, sections and exact tokens added, removed and changed from `old` to `new`."""
    for path in (old, new):
        connect(path).close()  # a readable mdfts index of this schema, or a one-line error
    db = sqlite3.connect("file::memory:", uri=True)
    try:
        for name, path in (("old", old), ("new", new)):
            db.execute(f"attach database ? as {name}", (path.resolve().as_uri() + "?mode=ro&immutable=1",))
        documents = [DocumentChange(**r) for r in _rows(db, "diff_documents")]  # type: ignore[typeddict-item]
        sections = [
            SectionChange(
                status=r["status"], path=r["path"], anchor=r["anchor"], heading=r["heading"], level=r["level"],
                old_lines=_lines(r["old_start"], r["old_end"]), new_lines=_lines(r["new_start"], r["new_end"]),
                included=bool(r["included"]),
            )
            for r in _rows(db, "diff_sections")
        ]
        tokens: list[TokenChange] = []
        for r in _rows(db, "diff_tokens"):
            place = Place(path=r["path"], anchor=r["anchor"], heading=r["heading"], line=r["start_line"])
            last = tokens[-1] if tokens else None
            if last and (last["status"], last["token"], last["kind"]) == (r["status"], r["token"], r["kind"]):
                last["places"].append(place)
            else:
                tokens.append(TokenChange(status=r["status"], token=r["token"], kind=r["kind"], places=[place],
                                          other_documents=r["other_documents"]))
    except sqlite3.DatabaseError as err:
        raise IndexVersionError(f"{old} or {new}: cannot compare the indexes: {err}") from None
    finally:
        db.close()
    summary = {
        what: {s: sum(1 for x in items if x["status"] == s) for s in STATUSES}
        for what, items in (("documents", documents), ("sections", sections), ("tokens", tokens))
    }
    del summary["tokens"]["changed"]  # a token is there or not
    return Diff(old=str(old), new=str(new), summary=summary, documents=documents, sections=sections,
                tokens=tokens)
