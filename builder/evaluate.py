"""Score an index against labelled queries: Hit@1, Hit@3, MRR@10, FileHit@1, top-hit size."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypedDict

from mdfts.errors import MdftsError
from mdfts.index import open_index


class Gold(TypedDict):
    path: str
    line: int


class Scores(TypedDict):
    n: int
    hit1: float
    hit3: float
    mrr10: float
    filehit1: float
    median_chars1: float


def load_queries(path: Path) -> list[dict[str, Any]]:
    """Labelled queries, one JSON object a line: {"id", "q", "gold": [{"path", "line"}], "kind"}."""
    out = []
    try:
        data = path.read_bytes()
    except OSError as err:
        raise MdftsError(f"{path}: cannot read: {err.strerror or err}") from None
    try:
        # not splitlines(): JSON strings may hold U+2028; a BOM is dropped, as discover drops the docs'
        lines = data.decode("utf-8").removeprefix("\ufeff").split("\n")
    except UnicodeDecodeError as err:
        at = data.count(b"\n", 0, err.start) + 1
        raise MdftsError(f"{path}:{at}: not valid UTF-8") from None
    seen: dict[str, int] = {}  # id (as JSON) -> its line: a copied line would count its query twice
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            try:
                obj = json.loads(line)
            except RecursionError:  # json.loads recurses once a bracket: "[[[[..." ran out of stack
                raise ValueError("nested too deeply") from None
            if not isinstance(obj, dict):
                raise ValueError("not a JSON object")
            if not isinstance(obj.get("q"), str) or not isinstance(obj.get("gold"), list):
                raise ValueError("needs a string 'q' and a list 'gold'")
            if not obj["gold"]:
                raise ValueError("'gold' is empty: it could never be a hit")
            for g in obj["gold"]:
                gold_line = g.get("line") if isinstance(g, dict) else None
                # true is an int to Python; a line 0 or below is in no section, so it could never count
                if not (isinstance(g, dict) and isinstance(g.get("path"), str) and type(gold_line) is int
                        and gold_line >= 1):
                    raise ValueError("each gold entry needs 'path' and an integer 'line', 1 or more")
            # a query without a kind is in the overall row only; "" or "all" would merge into it unseen
            if "kind" in obj and not (isinstance(obj["kind"], str) and obj["kind"] not in ("", "all")):
                raise ValueError("'kind' needs to be a string other than \"\" and \"all\" (the row of every query)")
            if "id" in obj:
                key = json.dumps(obj["id"], sort_keys=True)
                if key in seen:
                    raise ValueError(f"id {key} is on line {seen[key]} too")
                seen[key] = n
        except ValueError as err:
            raise MdftsError(f"{path}:{n}: not a labelled query ({err})") from None
        out.append(obj)
    if not out:
        raise MdftsError(f"{path}: no queries")
    return out


class Span(Protocol):
    """What scoring reads of a result: its file and its lines (a Hit, or a row of search.sql)."""

    @property
    def path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


def rank_of(hits: Sequence[Span], gold: Sequence[Gold], k: int = 10) -> int | None:
    """1-based rank of the first hit that contains a gold line, within the top k."""
    for i, h in enumerate(hits[:k]):
        if any(h.path == g["path"] and h.start_line <= g["line"] <= h.end_line for g in gold):
            return i + 1
    return None


def scores(rows: Sequence[tuple[int | None, bool, int | None]]) -> Scores:
    """The metrics of (rank, first hit in a gold file, first hit's characters) rows."""
    n = len(rows)
    ranks = [r for r, _, _ in rows]
    sizes = [c for _, _, c in rows if c is not None]
    return Scores(
        n=n,
        hit1=sum(r == 1 for r in ranks) / n,
        hit3=sum(r is not None and r <= 3 for r in ranks) / n,
        mrr10=sum(1 / r for r in ranks if r and r <= 10) / n,  # with -k past 10 a rank can be 11 or more
        filehit1=sum(f for _, f, _ in rows) / n,
        median_chars1=statistics.median(sizes) if sizes else 0,
    )


def evaluate(db: Path, queries_file: Path, k: int = 10) -> dict[str, Any]:
    """Metrics overall and per kind, plus every query's rank."""
    qs = load_queries(queries_file)
    per_query, rows = [], []
    with open_index(db) as ix:
        searched = [hits for _, hits in ix.search_many((q["q"] for q in qs), limit=k)]
    for q, hits in zip(qs, searched, strict=True):
        r = rank_of(hits, q["gold"], k)
        file_hit = bool(hits) and hits[0].path in {g["path"] for g in q["gold"]}
        chars = len(hits[0].body) if hits else None
        kind: str = q.get("kind", "all")
        rows.append((kind, (r, file_hit, chars)))
        top = [f"{h.lines} {h.heading}" for h in hits[:3]]
        per_query.append({"id": q.get("id"), "kind": kind, "q": q["q"], "rank": r, "top": top})
    by_kind = {"all": scores([x for _, x in rows])}
    for kind in sorted({k for k, _ in rows} - {"all"}):
        by_kind[kind] = scores([x for kk, x in rows if kk == kind])
    return {"index": str(db), "queries": str(queries_file), "k": k, "kinds": by_kind, "per_query": per_query}
