"""The lookups over an index's stored queries: search, show, token, context (and the Hit record).

Each takes an open `Index`, or a path it opens and closes again.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypedDict

from mdfts.errors import MdftsError
from mdfts.index import Index, open_index

IndexLike = Index | Path | str


class Hit(TypedDict):
    rank: int
    id: int
    path: str
    heading: str
    trail: list[str]
    anchor: str
    level: int
    start_line: int
    end_line: int
    score: float
    snippet: str
    content: str


@contextlib.contextmanager
def _opened(db: IndexLike) -> Iterator[Index]:
    """`db` itself when it is an open Index; else the index at that path, closed on the way out."""
    if isinstance(db, Index):
        yield db
    else:
        with open_index(db) as ix:
            yield ix


def _hit(row: dict[str, Any]) -> Hit:
    return Hit(
        rank=row["rank"], id=row["id"], path=row["path"], heading=row["heading"],
        trail=json.loads(row["trail"]), anchor=row["anchor"], level=row["level"],
        start_line=row["start_line"], end_line=row["end_line"], score=row["score"],
        snippet=row["snippet"] or "", content=row["body"],
    )


def search(db: IndexLike, q: str, limit: int = 10) -> list[Hit]:
    """The best sections for any text, best first (queries/search.sql, as stored in the index)."""
    with _opened(db) as ix:
        return [_hit(r) for r in ix.run("search", q=q, limit=limit)]


def search_many(db: IndexLike, queries: Iterable[str], limit: int = 10) -> Iterator[tuple[str, list[Hit]]]:
    """(query, hits) for each query, in order; the query file is read once."""
    with _opened(db) as ix:
        for q in queries:
            yield q, [_hit(r) for r in ix.run("search", q=q, limit=limit)]


def has_terms(q: str) -> bool:
    """False when the text has nothing a search could match (only spaces and punctuation)."""
    return any(ch.isalnum() for ch in q)


def parse_ref(ref: str) -> dict[str, Any]:
    """`12` → {"id": 12}; `runbooks/payments.md#rollback` → {"path": ..., "anchor": ...}."""
    if ref.strip().isdigit():
        return {"id": int(ref)}
    path, _, anchor = ref.partition("#")
    return {"path": path, "anchor": anchor}


def show(db: IndexLike, ref: str, neighbors: bool = False) -> list[dict[str, Any]]:
    """A section (and with `neighbors`, its parent, previous, next and children)."""
    with _opened(db) as ix:
        rows = ix.run("section", **parse_ref(ref))
        if not rows:
            raise MdftsError(f"no section {ref!r} in this index (give an id, or PATH#ANCHOR)")
        if not neighbors:
            return rows
        return ix.run("neighbors", id=rows[0]["id"])


def token(db: IndexLike, tok: str, limit: int = 20) -> list[dict[str, Any]]:
    """Sections holding an exact token, case-exact ones first."""
    with _opened(db) as ix:
        return ix.run("token", token=tok, limit=limit)


def run_named(db: IndexLike, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of the stored query `name`."""
    with _opened(db) as ix:
        return ix.run(name, **params)


def _estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4  # ~4 characters per token for English and code


def context(db: IndexLike, question: str, budget: int = 2000, k: int = 5) -> str:
    """Prompt-ready markdown: the best sections first, each with its source; parents and
    neighbours only while they fit the budget (in estimated tokens). Says what it left out."""
    with _opened(db) as ix:
        return _context(ix, question, budget, k)


def _context(ix: Index, question: str, budget: int, k: int) -> str:
    hits = search(ix, question, limit=k)
    if not hits:
        return f"<!-- mdfts: no section matches {question!r} -->\n"
    used = 0
    seen: set[int] = set()
    blocks: list[str] = []
    left_out: list[str] = []

    def block(row: dict[str, Any], trail: Sequence[str], why: str) -> str:
        src = f"{row['path']}:{row['start_line']}-{row['end_line']}"
        head = " > ".join(trail) if trail else row["path"]
        return f"<!-- source: {src} | {head} | {why} -->\n{row['body'].rstrip()}\n"

    def offer(row: dict[str, Any], trail: Sequence[str], why: str) -> None:
        """Add a section if it fits the budget, else note it as left out."""
        nonlocal used
        text = block(row, trail, why)
        cost = _estimate_tokens(text)
        if used + cost > budget:
            left_out.append(f"{row['path']}:{row['start_line']}-{row['end_line']} ({why}, ~{cost} tokens)")
            return
        blocks.append(text)
        seen.add(row["id"])
        used += cost

    for h in hits:
        offer({**h, "body": h["content"]}, h["trail"], f"match #{h['rank']}")
    for h in hits:
        if h["id"] not in seen:
            continue
        for n in ix.run("neighbors", id=h["id"]):
            if n["relation"] in ("parent", "previous", "next") and n["id"] not in seen:
                offer(n, [], f"{n['relation']} of match #{h['rank']}")
    if not blocks:
        # Not even the best match fits: give its start rather than nothing, and say so.
        h = hits[0]
        trailer = "<!-- mdfts: section truncated -->\n"
        frame = len(block({**h, "body": ""}, h["trail"], f"match #{h['rank']}, cut to the budget") + trailer)
        body = h["content"][: max(budget * 4 - frame - 4, 0)].rstrip()
        blocks.append(block({**h, "body": body}, h["trail"], f"match #{h['rank']}, cut to the budget") + trailer)
        left_out = [x for x in left_out if not x.startswith(f"{h['path']}:{h['start_line']}-")]
    out = "\n".join(blocks)
    if left_out:
        out += "\n<!-- mdfts: left out for the budget of " + str(budget) + " tokens: " + "; ".join(left_out) + " -->\n"
    return out


def run_named_sql(db: IndexLike, name: str) -> str:
    """The SQL of the stored query `name`."""
    with _opened(db) as ix:
        return ix.sql(name)


def list_queries(db: IndexLike) -> list[dict[str, Any]]:
    """name, params and title of each stored query."""
    with _opened(db) as ix:
        return [{"name": q.name, "params": " ".join(":" + p for p in q.params), "title": q.title}
                for q in ix.queries.values()]
