"""What each ranking signal adds, per labelled set, and whether refitting the weights would help.

    python -m bench signals --shared ../shared --heldout bench/heldout
    python -m bench signals --set sample sample/docs sample/queries.jsonl

Builds each set's index, runs the index's own search.sql with `:explain` over every labelled
query (every candidate: `:limit` 200) and keeps each candidate's signal values and weights. The
score is their weighted sum, so the candidates can be ranked again with other weights without
running the SQL: the first table checks that this reproduces the SQL's first hits. Then:

- leave-one-out: Hit@1 with one weight set to 0, as a change per set (what the signal adds);
- leave-one-set-out refit: for each set, the weights refitted on the other sets (coordinate
  ascent over a grid, on Hit@1 plus a third of MRR@10), scored on the set left out, next to the
  shipped weights: a refit that gains where it was fitted and loses where it was not says the
  weights are not where the gap is.

`answer`, `near` and `page` are computed from the order of the other signals (see search.sql),
so with other weights they would take other values: their rows are approximations, the others
are exact. Needs numpy (`pip install -e '.[bench]'`, which bm25s brings).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import click

from bench.common import md_table
from bench.devsets import dev_sets, has_query_sets

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0)


class Labelled(NamedTuple):
    """One query's candidates: their signal values (a row each), ids and gold flags."""
    set: str
    x: npt.NDArray[np.float64]
    ids: npt.NDArray[np.int64]
    gold: npt.NDArray[np.bool_]
    sql_first: bool  # the SQL's own first hit is gold


def collect(db: Path, name: str, queries: Path) -> tuple[list[str], dict[str, float], list[Labelled]]:
    """Signal names, their weights and every labelled query's candidates, from one index."""
    import numpy as np

    conn = sqlite3.connect(db.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
    sql = conn.execute("select sql from mdfts_queries where name = 'search'").fetchone()[0]
    names: list[str] = []
    weights: dict[str, float] = {}
    out = []
    try:
        for line in queries.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            cur = conn.execute(sql, {"q": q["q"], "limit": 200, "explain": 1, "prefix": None})
            cols = [d[0] for d in cur.description]
            rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
            values, ids, gold = [], [], []
            for row in rows:
                signals = json.loads(row["explain"])["signals"]
                if not names:
                    names = list(signals)
                    weights = {k: float(signals[k]["weight"]) for k in names}
                values.append([float(signals[k]["value"]) for k in names])
                ids.append(row["id"])
                gold.append(any(g["path"] == row["path"] and row["start_line"] <= g["line"] <= row["end_line"]
                                for g in q["gold"]))
            out.append(Labelled(name, np.array(values, dtype=np.float64).reshape(len(rows), len(names) or 1),
                                np.array(ids, dtype=np.int64), np.array(gold, dtype=np.bool_),
                                bool(gold and gold[0])))
    finally:
        conn.close()
    return names, weights, out


def ranks(labelled: list[Labelled], w: npt.NDArray[np.float64]) -> list[int | None]:
    """Each query's rank of its first gold hit in the top 10 when scored with `w` (ties by id, as
    the SQL breaks them), or None."""
    import numpy as np

    out: list[int | None] = []
    for q in labelled:
        if not len(q.ids):
            out.append(None)
            continue
        order = np.lexsort((q.ids, -np.round(q.x @ w, 6)))[:10]
        hit = np.nonzero(q.gold[order])[0]
        out.append(int(hit[0]) + 1 if len(hit) else None)
    return out


def hits(labelled: list[Labelled], w: npt.NDArray[np.float64], sets: list[str]) -> dict[str, int]:
    """Hit@1 counts per set."""
    counts = dict.fromkeys(sets, 0)
    for q, r in zip(labelled, ranks(labelled, w), strict=True):
        if r == 1:
            counts[q.set] += 1
    return counts


def objective(labelled: list[Labelled], w: npt.NDArray[np.float64]) -> float:
    """What the refit maximises: Hit@1 plus a third of MRR@10, summed over the queries."""
    return sum((r == 1) + (1 / r if r else 0) / 3 for r in ranks(labelled, w))


def refit(labelled: list[Labelled], w0: npt.NDArray[np.float64], rounds: int = 2) -> npt.NDArray[np.float64]:
    """Coordinate ascent from `w0` over GRID (a negative weight keeps its sign)."""
    w = w0.copy()
    best = objective(labelled, w)
    for _ in range(rounds):
        moved = False
        for i in range(len(w)):
            for v in GRID:
                trial = w.copy()
                trial[i] = -v if w0[i] < 0 else v
                score = objective(labelled, trial)
                if score > best + 1e-9:
                    best, w, moved = score, trial, True
        if not moved:
            break
    return w


def report(names: list[str], weights: dict[str, float], labelled: list[Labelled], sets: list[str],
           do_refit: bool) -> str:
    """The three tables, as markdown."""
    import numpy as np

    w0 = np.array([weights[k] for k in names], dtype=np.float64)
    base = hits(labelled, w0, sets)
    sql = {s: sum(q.sql_first for q in labelled if q.set == s) for s in sets}
    out = ["## Hit@1 as the SQL ranks and as rescored from the signals", "",
           md_table(["set", "queries", "Hit@1 (SQL)", "Hit@1 (rescored)"],
                    [[s, sum(q.set == s for q in labelled), sql[s], base[s]] for s in sets]), "",
           "## Leave-one-out: Hit@1 with one weight set to 0, change per set", "",
           f"Shipped: {', '.join(f'{k} {weights[k]:g}' for k in names)}. (answer, near and page: "
           "approximations: they are computed from the order of the others, see bench/signals.py.)", ""]
    rows = []
    for i, k in enumerate(names):
        w = w0.copy()
        w[i] = 0.0
        got = hits(labelled, w, sets)
        delta = [got[s] - base[s] for s in sets]
        rows.append([k, *(f"{d:+d}" for d in delta), f"{sum(delta):+d}"])
    out += [md_table(["signal", *sets, "all"], rows), ""]
    if do_refit and len(sets) > 1:
        out += ["## Leave-one-set-out refit: the other sets' best weights, scored on the set left out", ""]
        fits = []
        for s in sets:
            w = refit([q for q in labelled if q.set != s], w0)
            scored = hits([q for q in labelled if q.set == s], w, [s])[s]
            moved = ", ".join(f"{k} {w0[i]:g}→{w[i]:g}" for i, k in enumerate(names) if w[i] != w0[i])
            fits.append([s, base[s], scored, f"{scored - base[s]:+d}", moved or "none"])
        out += [md_table(["left out", "Hit@1 shipped", "Hit@1 refit", "change", "weights moved"], fits), ""]
    return "\n".join(out)


@click.command()
@click.option("--shared", type=click.Path(file_okay=False, path_type=Path),
              help="The shared folder: every dev set under SHARED/devset whose corpus is present.")
@click.option("--heldout", type=click.Path(exists=True, file_okay=False, path_type=Path), callback=has_query_sets,
              help="Also the query sets in this folder (NAME.queries.jsonl over SHARED/corpora/NAME).")
@click.option("--set", "extra", nargs=3, multiple=True, metavar="NAME CORPUS QUERIES",
              help="A set of your own: a name, a folder of markdown and its labelled queries.")
@click.option("--refit/--no-refit", "do_refit", default=True, show_default=True,
              help="The leave-one-set-out refit table.")
@click.option("--work", type=click.Path(file_okay=False, path_type=Path),
              help="Build the indexes here and keep them (default: a temp folder).")
def main(shared: Path | None, heldout: Path | None, extra: tuple[tuple[str, str, str], ...], do_refit: bool,
         work: Path | None) -> None:
    """What each ranking signal adds per labelled set (leave-one-out), and a leave-one-set-out
    refit of the weights; prints markdown."""
    if heldout and not shared:  # its sets are over SHARED/corpora: without it they were left out unsaid
        raise click.UsageError("--heldout needs --shared")
    try:
        import numpy  # noqa: F401
    except ImportError:
        raise click.ClickException("needs numpy: pip install -e '.[bench]'") from None
    from mdfts.build import build_index

    sets: list[tuple[str, Path, Path]] = []
    if shared:
        sets += dev_sets(shared)
        if heldout:
            sets += dev_sets(shared, heldout)
    sets += [(n, Path(c), Path(q)) for n, c, q in extra]
    if not sets:
        raise click.UsageError("no labelled sets: give --shared (with its corpora present) or --set")
    names: list[str] = []
    weights: dict[str, float] = {}
    labelled: list[Labelled] = []
    with tempfile.TemporaryDirectory(prefix="mdfts-signals-") as tmp:
        root = work or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        for name, corpus, queries in sets:
            db = root / f"{name}.db"
            build_index([corpus], db)
            names, weights, got = collect(db, name, queries)
            labelled += got
    click.echo(report(names, weights, labelled, [s[0] for s in sets], do_refit))

