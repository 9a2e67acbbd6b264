"""Two versions of a query file, the same rows? Runs both over the same indexes and queries and
compares every column of every row, for a change that must move no result (a faster search.sql).

    python -m bench samerows OLD.sql NEW.sql INDEX.db=QUERIES.jsonl INDEX.db=bench:200 ...

Each query runs three ways, each bound as `mdfts query` binds it (every other parameter NULL):
as is, with `:explain` 1, and with `:prefix` the index's second-largest top folder and `:limit`
20 (where the file takes those parameters). QUERIES.jsonl holds objects with a "q" (the dev and
held-out sets' format); `bench:N` draws N of the bench's queries from the index. Exits 1 when any
run differs, naming the first few.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import click

from bench.speed import realistic_queries
from mdfts.index import connect
from mdfts.queries import sql_params


def read_queries(spec: str, db: Path) -> list[str]:
    """The queries a SPEC names: a JSON-lines file of {"q": ...}, or `bench:N`."""
    if spec.startswith("bench:"):
        return realistic_queries(db, int(spec.removeprefix("bench:")))
    lines = Path(spec).read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["q"] for line in lines if line.strip()]


def folder_prefix(conn: sqlite3.Connection) -> str | None:
    """A top folder to search within: the second largest (the largest is often all of them)."""
    rows = conn.execute("select substr(path, 1, instr(path, '/')) as p, count(*) from documents "
                        "where instr(path, '/') > 0 group by p order by 2 desc, 1 limit 2").fetchall()
    return str(rows[-1][0]) if rows else None


def _rows(conn: sqlite3.Connection, sql: str, bound: dict[str, Any]) -> tuple[Any, ...]:
    cur = conn.execute(sql, bound)
    return tuple(d[0] for d in cur.description or ()), cur.fetchall()


def compare(old: str, new: str, db: Path, queries: list[str]) -> tuple[int, int, list[tuple[str, str]]]:
    """(runs, rows, the (query, way) pairs whose rows differ) of both files over `queries`."""
    params = sql_params(old)
    if set(params) != set(sql_params(new)):
        raise click.ClickException(f"the files take different parameters: {params} and {sql_params(new)}")
    conn = connect(db)
    try:
        prefix = folder_prefix(conn)
        ways: list[tuple[str, dict[str, Any]]] = [("as is", {})]
        if "explain" in params:
            ways.append(("explain", {"explain": 1}))
        if "prefix" in params and prefix:
            ways.append((f"prefix {prefix}", {"prefix": prefix, "limit": 20}))
        runs, rows, differ = 0, 0, []
        for q in queries:
            for way, extra in ways:
                bound = {p: None for p in params} | {"q": q} | extra
                before = _rows(conn, old, bound)
                runs, rows = runs + 1, rows + len(before[1])
                if repr(before) != repr(_rows(conn, new, bound)):  # repr: 0.1 + 0.2 is not 0.3 here
                    differ.append((q, way))
    finally:
        conn.close()
    return runs, rows, differ


@click.command()
@click.argument("old", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("new", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("sets", nargs=-1, required=True)
def main(old: Path, new: Path, sets: tuple[str, ...]) -> None:
    """Compare every row of two versions of a query file; SETS are INDEX.db=QUERIES.jsonl or
    INDEX.db=bench:N.

    \b
    Example:
      git show main:queries/search.sql > /tmp/old.sql
      python -m bench samerows /tmp/old.sql queries/search.sql idx.db=../shared/devset/rook-docs.queries.jsonl
    """
    old_sql, new_sql = old.read_text(encoding="utf-8"), new.read_text(encoding="utf-8")
    total = [0, 0, 0]
    for spec in sets:
        db_name, sep, queries_spec = spec.partition("=")
        if not sep:
            raise click.UsageError(f"{spec!r}: give INDEX.db=QUERIES.jsonl or INDEX.db=bench:N")
        db = Path(db_name)
        queries = read_queries(queries_spec, db)
        runs, rows, differ = compare(old_sql, new_sql, db, queries)
        total = [total[0] + runs, total[1] + rows, total[2] + len(differ)]
        click.echo(f"{db.name} {Path(queries_spec).name}: {len(queries)} queries, {runs} runs, {rows} rows, "
                   f"{len(differ)} differ")
        for q, way in differ[:5]:
            click.echo(f"  differs: {q!r} ({way})")
    click.echo(f"all: {total[0]} runs, {total[1]} rows, {total[2]} differ")
    if total[2]:
        raise SystemExit(1)
