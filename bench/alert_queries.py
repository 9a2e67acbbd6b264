"""Write "<AlertName> <heading>" spot-check queries for a runbook index (used by `make eval`).

    python -m bench alert-queries INDEX.db > queries.jsonl

Alert runbooks (one file per alert, sections Meaning / Impact / Diagnosis / Mitigation) are
where naive section search fails: the alert name lives only in the file name and the h1.
Each query names the file's stem and one of those headings; the gold is that section.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import click

HEADINGS = ("meaning", "impact", "diagnosis", "mitigation")


def alert_query(path: str, heading: str) -> str:
    """The query for one runbook section: the file's stem (the alert's name) and the heading."""
    stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"{stem} {heading.lower()}"


@click.command()
@click.argument("db", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--limit", type=click.IntRange(1), default=200, show_default=True, help="Queries to write at most.")
def main(db: Path, limit: int) -> None:
    """Print JSON lines of "<AlertName> <heading>" queries, each with its section as the gold."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute(
        f"select path, heading, start_line from sections where lower(heading) in {HEADINGS!r} "
        "order by path, start_line"
    ).fetchall()
    step = max(1, len(rows) // limit)
    for i, (path, heading, line) in enumerate(rows[::step][:limit]):
        q = {"id": f"alert-{i}", "q": alert_query(path, heading), "gold": [{"path": path, "line": line}],
             "kind": "alert"}
        click.echo(json.dumps(q))
    conn.close()
