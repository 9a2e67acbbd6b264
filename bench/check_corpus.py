"""Check an index against a plain markdown-it parse of its source (issue #2's acceptance check).

    python -m bench check-corpus DOCS_DIR INDEX.db

Every heading section's (path, start_line) must equal the heading lines that a full
`MarkdownIt("commonmark").use(front_matter_plugin).use(docs_site_markup).enable("table").parse()`
finds, file by file (docs_site_markup: the admonitions, tabs and containers the build reads,
whose content may hold headings). Prints the counts and any difference; exits 1 on a difference.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import click
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from mdfts.discover import decode, discover
from mdfts.parse import docs_site_markup


def compare(root: Path, db_path: Path) -> int:
    """Print each file whose heading lines differ and a summary; returns how many differ."""
    md = MarkdownIt("commonmark").use(front_matter_plugin).use(docs_site_markup).enable("table")
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    indexed: dict[str, list[int]] = {}
    for path, line in db.execute("select path, start_line from sections where level > 0 order by path, start_line"):
        indexed.setdefault(path, []).append(line)
    files = discover([root])
    bad = headings = 0
    for f in files:
        text = decode(f.path, f.abspath.read_bytes())
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        expected = [t.map[0] + 1 for t in md.parse(text) if t.type == "heading_open" and t.map]
        headings += len(expected)
        if indexed.get(f.path, []) != expected:
            bad += 1
            print(f"{f.path}: index {indexed.get(f.path, [])[:8]} != markdown-it {expected[:8]}")
    print(f"{root}: {len(files)} files, {headings} headings, {bad} files differ")
    return bad


@click.command()
@click.argument("root", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("db", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def main(root: Path, db: Path) -> None:
    """Check DB's heading sections against a plain markdown-it parse of ROOT; exit 1 on a difference."""
    if compare(root, db):
        raise SystemExit(1)
