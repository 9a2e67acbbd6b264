"""Write "<AlertName> <heading>" spot-check queries for a runbook index (used by `make eval`).

    python tests/alert_queries.py INDEX.db > queries.jsonl

Alert runbooks (one file per alert, sections Meaning / Impact / Diagnosis / Mitigation) are
where naive section search fails: the alert name lives only in the file name and the h1.
Each query names the file's stem and one of those headings; the gold is that section.
"""

from __future__ import annotations

import json
import sqlite3
import sys

HEADINGS = ("meaning", "impact", "diagnosis", "mitigation")


def main(db_path: str, limit: int = 200) -> None:
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    rows = db.execute(
        f"select path, heading, start_line from sections where lower(heading) in {HEADINGS!r} "
        "order by path, start_line"
    ).fetchall()
    step = max(1, len(rows) // limit)
    for i, (path, heading, line) in enumerate(rows[::step][:limit]):
        stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        q = {"id": f"alert-{i}", "q": f"{stem} {heading.lower()}", "gold": [{"path": path, "line": line}], "kind": "alert"}
        print(json.dumps(q))


if __name__ == "__main__":
    main(sys.argv[1])
