"""Score the dev sets' queries on one index of many corpora, to judge a cut of the candidates.

    python -m bench mixed SHARED_DIR --work /tmp/mixed [--pad 100000] [--sql VARIANT.sql ...]

The dev sets' own indexes hold at most a few thousand sections, so a rule that drops
candidates or scores fewer rows (search.sql's budget, its top 25 and top 15) is rarely tested
on them. This builds one index over every corpus in SHARED_DIR/corpora and every dev set's
corpus together (each under its own folder, so a dev set's gold paths get that folder as a
prefix), optionally padded with the bench's replicated sample corpus up to `--pad` sections,
and scores each dev set's queries on it: Hit@1 and MRR@10 per set and kind, and each query's
first hit, for main's search.sql and for each variant given, side by side. `--own` scores the
same variants on each dev set's own index too. A variant loses a query when its first hit was
the gold and no longer is.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import click

from bench.common import default_corpus, replicate
from bench.devsets import dev_sets
from mdfts.build import build_index
from mdfts.evaluate import Gold, load_queries, rank_of, scores

SEARCH = Path(__file__).resolve().parent.parent / "queries" / "search.sql"


def mixed_roots(shared: Path) -> list[Path]:
    """Every corpus folder: SHARED/corpora/* and the dev sets' own corpora, each once."""
    roots = sorted(p for p in (shared / "corpora").iterdir() if p.is_dir())
    for _, corpus, _ in dev_sets(shared):
        if corpus.resolve() not in {r.resolve() for r in roots}:
            roots.append(corpus)
    return roots


def prefix_of(root: Path, roots: Sequence[Path]) -> str:
    """The folder a root's files sit under in an index built from all of `roots` (their common parent)."""
    parent = Path(os.path.commonpath([str(r.resolve()) for r in roots]))
    return root.resolve().relative_to(parent).as_posix() + "/"


def build_mixed(shared: Path, work: Path, pad: int) -> tuple[Path, dict[str, str]]:
    """The mixed index (built once, kept in `work`) and each dev set's path prefix in it."""
    roots = mixed_roots(shared)
    if pad:
        sample = default_corpus(work, 20_000_000)
        first = work / "sample.db"
        if not first.exists():
            build_index([sample], first, workers=1)
        with sqlite3.connect(first) as conn:
            counts = dict(conn.execute("select path, sections from documents").fetchall())
        with sqlite3.connect(build_mixed(shared, work, 0)[0]) as conn:
            base = int(conn.execute("select count(*) from sections").fetchone()[0])
        pad_tree = work / "pad"
        if not pad_tree.exists():
            replicate(sample, pad_tree, until_sections=max(pad - base, 1), sections_of=counts)
        roots = [*roots, pad_tree]
    db = work / (f"mixed-{pad}.db" if pad else "mixed.db")
    if not db.exists():
        build_index(roots, db, workers=1)
    return db, {name: prefix_of(corpus, roots) for name, corpus, _ in dev_sets(shared)}


class Row(NamedTuple):
    path: str
    start_line: int
    end_line: int


def run_queries(db: Path, sql: str, queries: Sequence[str]) -> list[list[Row]]:
    """The top 10 (path, start_line, end_line) of each query, by one search.sql text."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = []
    for q in queries:
        cur = conn.execute(sql, {"q": q, "limit": 10, "explain": None, "prefix": None})
        names = [d[0] for d in cur.description]
        at = [names.index(c) for c in Row._fields]
        out.append([Row(*(row[i] for i in at)) for row in cur.fetchall()])
    conn.close()
    return out


def under(prefix: str, gold: Sequence[Gold]) -> list[Gold]:
    """The gold as the mixed index names it: each path under its set's folder."""
    return [Gold(path=prefix + g["path"], line=g["line"]) for g in gold]


def score(ranks: Sequence[int | None]) -> tuple[float, float]:
    """Hit@1 and MRR@10 of a list of ranks (mdfts eval's formulas)."""
    s = scores([(r, False, None) for r in ranks]) if ranks else None
    return (s["hit1"], s["mrr10"]) if s else (0.0, 0.0)


def judge(db: Path, sets: Sequence[tuple[str, Path, str]], sqls: Sequence[Path]) -> list[str]:
    """Markdown lines: Hit@1 / MRR@10 per set (name, queries, path prefix) and kind, one column
    per query file, and the first hits each variant loses and wins."""
    lines = []
    for name, qfile, prefix in sets:
        qs = load_queries(qfile)
        ranks = [[rank_of(res, under(prefix, q["gold"])) for res, q in
                  zip(run_queries(db, p.read_text(encoding="utf-8"), [q["q"] for q in qs]), qs, strict=True)]
                 for p in sqls]
        lines.append(f"| {name} | kind | n | " + " | ".join(p.name for p in sqls) + " |")
        lines.append("|---|---|---:|" + "---:|" * len(sqls))
        for kind in ["all", *dict.fromkeys(q["kind"] for q in qs)]:
            sel = [i for i, q in enumerate(qs) if kind in ("all", q["kind"])]
            cells = [score([r[i] for i in sel]) for r in ranks]
            lines.append(f"| | {kind} | {len(sel)} | " + " | ".join(f"{a:.3f} / {b:.3f}" for a, b in cells) + " |")
        for v, r in zip(sqls[1:], ranks[1:], strict=True):
            lost = [qs[i]["id"] for i in range(len(qs)) if ranks[0][i] == 1 and r[i] != 1]
            won = [qs[i]["id"] for i in range(len(qs)) if ranks[0][i] != 1 and r[i] == 1]
            lines.append(f"\n{name}, {v.name} against {sqls[0].name}: first hits lost {lost or 'none'},"
                         f" won {won or 'none'}\n")
        lines.append("")
    return lines


@click.command()
@click.argument("shared", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--work", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the indexes (kept: a second run reuses them).")
@click.option("--pad", type=int, default=0, help="Pad the index with the bench's sample copies to this many sections.")
@click.option("--sql", "variants", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A search.sql variant to score next to queries/search.sql (repeatable).")
@click.option("--own", is_flag=True, help="Also score every variant on each dev set's own index.")
def main(shared: Path, work: Path, pad: int, variants: tuple[Path, ...], own: bool) -> None:
    """Score the dev sets on one index of every corpus, for search.sql and its variants."""
    work.mkdir(parents=True, exist_ok=True)
    db, prefixes = build_mixed(shared, work, pad)
    with sqlite3.connect(db) as conn:
        n = conn.execute("select count(*) from sections").fetchone()[0]
    sqls = [SEARCH, *variants]
    click.echo(f"mixed index: {n} sections ({db.name})\n")
    sets = dev_sets(shared)
    click.echo("\n".join(judge(db, [(name, qfile, prefixes[name]) for name, _, qfile in sets], sqls)))
    if own:
        for name, corpus, qfile in sets:
            own_db = work / f"own-{name}.db"
            if not own_db.exists():
                build_index([corpus], own_db, workers=1)
            click.echo(f"own index ({name}):\n")
            click.echo("\n".join(judge(own_db, [(name, qfile, "")], sqls)))
