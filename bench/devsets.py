"""Score mdfts on every labelled dev set next to the baselines (`make eval`).

    python -m bench devsets SHARED_DIR --eval-python EVALVENV/bin/python --mdfts-cmd .venv/bin/mdfts

For each `SHARED_DIR/devset/NAME.queries.jsonl` whose corpus exists (`devset/NAME/` or
`corpora/NAME/`), runs `SHARED_DIR/eval/run_eval.py` with the systems mdfts, fts5naive and
bm25s, and prints one table per set: Hit@1 and MRR@10 per query kind, a system per column.
Exits 1 when mdfts is below either baseline on any set overall (Hit@1), so CI can gate on it.

`--heldout DIR` adds the sets in DIR (`NAME.queries.jsonl` over `SHARED_DIR/corpora/NAME/`; a
DIR that is not there or holds no such file is bad usage, not nothing to score):
bench/heldout holds small hand-labelled sets over the shared corpora that have no dev set. They
are scored and printed the same way but never gate: 40 queries a set is too few (one query is
0.025), and they exist to show whether a ranking change holds on docs it was not tuned on.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

SYSTEMS = ("mdfts", "fts5naive", "bm25s")
BASELINES = ("fts5naive", "bm25s")


def dev_sets(shared: Path, queries_dir: Path | None = None) -> list[tuple[str, Path, Path]]:
    """(name, corpus folder, queries file) for every set in `queries_dir` (default: the shared
    devset folder) whose corpus is present, by name."""
    out = []
    for queries in sorted((queries_dir or shared / "devset").glob("*.queries.jsonl")):
        name = queries.name.removesuffix(".queries.jsonl")
        for corpus in (shared / "devset" / name, shared / "corpora" / name):
            if corpus.is_dir():
                out.append((name, corpus, queries))
                break
    return out


def score_table(name: str, report: dict[str, Any]) -> str:
    """One markdown table: a row per query kind, Hit@1 / MRR@10 for each system."""
    systems = [s for s in SYSTEMS if s in report]
    kinds = list(report[systems[0]]["kinds"])
    lines = [f"### {name}", "",
             "| kind | n | " + " | ".join(f"{s} Hit@1 | {s} MRR@10" for s in systems) + " | mdfts med chars@1 |",
             "|---|---:|" + "---:|---:|" * len(systems) + "---:|"]
    for kind in kinds:
        cells = []
        for s in systems:
            m = report[s]["kinds"].get(kind)
            cells += [f"{m['hit1']:.3f}", f"{m['mrr10']:.3f}"] if m else ["-", "-"]
        n = report[systems[0]]["kinds"][kind]["n"]
        med = report["mdfts"]["kinds"][kind]["med_chars1"] if "mdfts" in report else 0
        lines.append(f"| {kind} | {n} | " + " | ".join(cells) + f" | {med:.0f} |")
    return "\n".join(lines)


def _score(shared: Path, eval_python: str, mdfts_cmd: str, name: str, corpus: Path,
           queries: Path) -> dict[str, Any]:
    """run_eval.py's per-system report for one set."""
    try:
        proc = subprocess.run(
            [eval_python, str(shared / "eval" / "run_eval.py"), str(corpus), str(queries),
             "--systems", ",".join(SYSTEMS), "--mdfts-cmd", mdfts_cmd, "--json"],
            capture_output=True, text=True, encoding="utf-8")
    except OSError as err:  # no such file, or not executable: a traceback once
        raise click.ClickException(f"{eval_python}: cannot run ({err.strerror}); set --eval-python") from None
    if proc.returncode:
        raise click.ClickException(f"{name}: run_eval.py exited {proc.returncode}: {proc.stderr[-1500:]}")
    report: dict[str, Any] = json.loads(proc.stdout)["systems"]
    return report


def below_baselines(report: dict[str, Any]) -> list[str]:
    """The baselines that beat mdfts overall (Hit@1) in one set's report."""
    ours = report["mdfts"]["kinds"]["all"]["hit1"]
    return [b for b in BASELINES if report[b]["kinds"]["all"]["hit1"] > ours + 1e-9]


def has_query_sets(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """--heldout's check: a folder without query sets is a wrong path, not nothing to score."""
    if value is not None and not any(value.glob("*.queries.jsonl")):
        raise click.BadParameter(f"{value}: no NAME.queries.jsonl in it", ctx, param)
    return value


@click.command()
@click.argument("shared", type=click.Path(file_okay=False, path_type=Path))
@click.option("--eval-python", default=sys.executable, show_default=True,
              help="The Python that has the evaluator's requirements (rank-bm25, bm25s, sqlite-utils, ...).")
@click.option("--mdfts-cmd", default="mdfts", show_default=True, help="The mdfts executable to score.")
@click.option("--heldout", type=click.Path(exists=True, file_okay=False, path_type=Path), callback=has_query_sets,
              help="Also score the query sets in this folder (report only, never gating).")
def main(shared: Path, eval_python: str, mdfts_cmd: str, heldout: Path | None) -> None:
    """Score mdfts, fts5naive and bm25s on every dev set under SHARED; exit 1 if mdfts is below a baseline."""
    sets = dev_sets(shared)
    if not sets:
        click.echo(f"no dev sets under {shared}/devset: skipped")
        return
    failed = []
    for name, corpus, queries in sets:
        report = _score(shared, eval_python, mdfts_cmd, name, corpus, queries)
        click.echo(score_table(name, report) + "\n")
        worse = below_baselines(report)
        if worse:
            failed.append(f"{name} (below {', '.join(worse)})")
    extra = dev_sets(shared, heldout) if heldout else []
    for name, corpus, queries in extra:
        report = _score(shared, eval_python, mdfts_cmd, name, corpus, queries)
        click.echo(score_table(f"{name} (held out, report only)", report) + "\n")
        worse = below_baselines(report)
        if worse:
            click.echo(f"note: on held-out {name} mdfts is below {', '.join(worse)} overall\n")
    if failed:
        raise click.ClickException("mdfts is below a baseline overall on: " + "; ".join(failed))
    click.echo(f"mdfts is at or above fts5naive and bm25s overall on all {len(sets)} dev sets")
