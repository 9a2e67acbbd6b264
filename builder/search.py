"""Run the shipped queries against an index: search, show, token, context."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypedDict

from mdfts.errors import MdftsError
from mdfts.index import open_index
from mdfts.queries import get_query, run_query


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


def _connect(db: Path | sqlite3.Connection) -> sqlite3.Connection:
    return db if isinstance(db, sqlite3.Connection) else open_index(Path(db))


def _hit(row: dict[str, Any]) -> Hit:
    return Hit(
        rank=row["rank"], id=row["id"], path=row["path"], heading=row["heading"],
        trail=json.loads(row["trail"]), anchor=row["anchor"], level=row["level"],
        start_line=row["start_line"], end_line=row["end_line"], score=row["score"],
        snippet=row["snippet"] or "", content=row["body"],
    )


def search(db: Path | sqlite3.Connection, q: str, limit: int = 10) -> list[Hit]:
    """The best sections for any text, best first (queries/search.sql, as stored in the index)."""
    conn = _connect(db)
    rows = run_query(conn, get_query(conn, "search"), {"q": q, "limit": limit})
    return [_hit(r) for r in rows]


def search_many(db: Path | sqlite3.Connection, queries: Iterable[str], limit: int = 10) -> Iterable[tuple[str, list[Hit]]]:
    """(query, hits) for each query, in order; the query file is read once."""
    conn = _connect(db)
    query = get_query(conn, "search")
    for q in queries:
        rows = run_query(conn, query, {"q": q, "limit": limit})
        yield q, [_hit(r) for r in rows]


def has_terms(q: str) -> bool:
    """False when the text has nothing a search could match (only spaces and punctuation)."""
    return any(ch.isalnum() for ch in q)


def parse_ref(ref: str) -> dict[str, Any]:
    """`12` → {"id": 12}; `runbooks/payments.md#rollback` → {"path": ..., "anchor": ...}."""
    if ref.strip().isdigit():
        return {"id": int(ref)}
    path, _, anchor = ref.partition("#")
    return {"path": path, "anchor": anchor}


def show(db: Path | sqlite3.Connection, ref: str, neighbors: bool = False) -> list[dict[str, Any]]:
    """A section (and with `neighbors`, its parent, previous, next and children)."""
    conn = _connect(db)
    rows = run_query(conn, get_query(conn, "section"), parse_ref(ref))
    if not rows:
        raise MdftsError(f"no section {ref!r} in this index (give an id, or PATH#ANCHOR)")
    if not neighbors:
        return rows
    return run_query(conn, get_query(conn, "neighbors"), {"id": rows[0]["id"]})


def token(db: Path | sqlite3.Connection, tok: str, limit: int = 20) -> list[dict[str, Any]]:
    """Sections holding an exact token, case-exact ones first."""
    conn = _connect(db)
    return run_query(conn, get_query(conn, "token"), {"token": tok, "limit": limit})


def run_named(db: Path | sqlite3.Connection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    conn = _connect(db)
    return run_query(conn, get_query(conn, name), params)


def _estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4  # ~4 characters per token for English and code


def context(db: Path | sqlite3.Connection, question: str, budget: int = 2000, k: int = 5) -> str:
    """Prompt-ready markdown: the best sections first, each with its source; parents and
    neighbours only while they fit the budget (in estimated tokens). Says what it left out."""
    conn = _connect(db)
    hits = search(conn, question, limit=k)
    if not hits:
        return f"<!-- mdfts: no section matches {question!r} -->\n"
    neighbors_q = get_query(conn, "neighbors")
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
        for n in run_query(conn, neighbors_q, {"id": h["id"]}):
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


def run_named_sql(db: Path | sqlite3.Connection, name: str) -> str:
    return get_query(_connect(db), name).sql


def list_queries(db: Path | sqlite3.Connection) -> list[dict[str, Any]]:
    from mdfts.queries import index_queries

    return [{"name": q.name, "params": " ".join(":" + p for p in q.params), "title": q.title}
            for q in index_queries(_connect(db)).values()]
