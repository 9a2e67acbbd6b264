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


_SIGN = {"added": "+", "removed": "-", "changed": "~"}
_MAX_PLACES = 3


def _counts(diff: Diff) -> str:
    parts = []
    for what, label in (("documents", "documents"), ("sections", "sections"), ("tokens", "exact tokens")):
        counts = diff["summary"][what]
        shown = ", ".join(f"{n} {s}" for s, n in counts.items() if n)
        parts.append(f"{label}: {shown or 'none'}")
    return "; ".join(parts)


def _range(lines: list[int] | None) -> str:
    return "" if lines is None else f"{lines[0]}-{lines[1]}"


def _section_lines(s: SectionChange) -> str:
    if s["status"] == "changed" and s["old_lines"] != s["new_lines"]:
        return f"lines {_range(s['old_lines'])} → {_range(s['new_lines'])}"
    return f"lines {_range(s['new_lines'] or s['old_lines'])}"


def _ref(path: str, anchor: str) -> str:
    return f"{path}#{anchor}" if anchor else f"{path} (lead text)"


def _places(t: TokenChange, fmt: str = "{}") -> str:
    shown = [fmt.format(f"{p['path']}:{p['line']}") for p in t["places"][:_MAX_PLACES]]
    more = len(t["places"]) - _MAX_PLACES
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _elsewhere(t: TokenChange) -> str:
    n = t["other_documents"]
    docs = f"{n} other document{'s' if n != 1 else ''}"
    if t["status"] == "removed":
        return f"still in {docs}" if n else "gone from the index"
    return f"already in {docs}" if n else "new to the index"


def _changed_paths(diff: Diff) -> set[str]:
    # Sections of added and removed documents are in the JSON; the text lists the document once.
    return {d["path"] for d in diff["documents"] if d["status"] == "changed"}


def _section_count(d: DocumentChange) -> str:
    n = d["new_sections"] if d["status"] == "added" else d["old_sections"]
    if d["status"] == "changed":
        return f"{d['old_sections']} → {d['new_sections']} sections"
    return f"{n} section{'s' if n != 1 else ''}"


def format_text(diff: Diff) -> str:
    """The diff as plain text: a summary line, then documents, sections and tokens."""
    out = [f"{diff['old']} → {diff['new']}: {_counts(diff)}"]
    if diff["documents"]:
        out += ["", "documents"]
        out += [f"  {_SIGN[d['status']]} {d['path']}  ({_section_count(d)})" for d in diff["documents"]]
    changed = _changed_paths(diff)
    sections = [s for s in diff["sections"] if s["path"] in changed]
    if sections:
        width = max(len(_ref(s["path"], s["anchor"])) for s in sections)
        out += ["", "sections"]
        out += [f"  {_SIGN[s['status']]} {_ref(s['path'], s['anchor']).ljust(width)}  {_section_lines(s)}"
                for s in sections]
    if diff["tokens"]:
        width = min(40, max(len(f"{t['token']} ({t['kind']})") for t in diff["tokens"]))
        out += ["", "exact tokens"]
        out += [f"  {_SIGN[t['status']]} {(t['token'] + ' (' + t['kind'] + ')').ljust(width)}  {_places(t)}"
                f"  ({_elsewhere(t)})" for t in diff["tokens"]]
    return "\n".join(out) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return _cell(f"{fence}{pad}{text}{pad}{fence}")


_MD_STATUS = {"added": "added", "removed": "**removed**", "changed": "changed"}
MAX_ROWS = 50  # per markdown table: a pull-request comment stays readable (and under GitHub's limit)


def _capped(rows: list[str], total: int, what: str) -> list[str]:
    if total <= MAX_ROWS:
        return rows
    return rows[:MAX_ROWS] + ["", f"…and {total - MAX_ROWS} more {what}; `mdfts diff --json` lists them all."]


def format_markdown(diff: Diff) -> str:
    """The diff as GitHub-flavoured markdown, for a pull-request comment."""
    if not (diff["documents"] or diff["tokens"]):
        return "### Docs index: no changes\n\nNo document, section or exact token differs.\n"
    out = ["### Docs index changes", "", _counts(diff).replace("; ", " · ") + ".", ""]
    if diff["documents"]:
        out += ["| | Document | Sections |", "|---|---|---|"]
        out += _capped([f"| {_MD_STATUS[d['status']]} | {_code(d['path'])} | {_section_count(d).split(' section')[0]} |"
                        for d in diff["documents"]], len(diff["documents"]), "documents")
        out.append("")
    changed = _changed_paths(diff)
    sections = [s for s in diff["sections"] if s["path"] in changed]
    if sections:
        out += [f"<details><summary>Sections of changed documents ({len(sections)})</summary>", ""]
        out += ["| | Section | Heading | Lines |", "|---|---|---|---|"]
        out += _capped([f"| {_MD_STATUS[s['status']]} | {_code(_ref(s['path'], s['anchor']))} | "
                        f"{_cell(s['heading']) or '(lead text)'} | {_section_lines(s).removeprefix('lines ')} |"
                        for s in sections], len(sections), "sections")
        out += ["", "</details>", ""]
    if diff["tokens"]:
        out += ["| | Exact token | Kind | Where | Elsewhere |", "|---|---|---|---|---|"]
        out += _capped([f"| {_MD_STATUS[t['status']]} | {_code(t['token'])} | {t['kind']} | {_places(t, '`{}`')} | "
                        f"{_elsewhere(t)} |" for t in diff["tokens"]], len(diff["tokens"]), "exact tokens")
        out.append("")
    return "\n".join(out)
