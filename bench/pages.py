"""Datasette pages under hostile docs: every page kind of `mdfts serve` timed alone, and how long
a small request waits while the slowest page is asked for 4 times at once.

    python -m bench pages [CORPUS ...]      # hostile files of issue #16, plus these corpora

Prints markdown tables (the figures in docs/bad-input.md and docs/datasette.md).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click

from mdfts.build import build_index

# The reproductions of #16 that reach the pages (rendering) and the search page.
HOSTILE = {
    "table-bomb.md": "# T\n\n" + ("|a" * 300 + "|\n" + "|-" * 300 + "|\n" + "x\n" * 300 + "\n") * 20,
    "link-open.md": "# Links\n\n" + "[a](" * 250_000 + "\n",
    "image-open.md": "# Images\n\n" + "![" * 500_000 + "\n",
    **{f"many/image-{i:02}.md": f"# Image {i}\n\n" + "![" * 50_000 + "\n" for i in range(24)},
}


@contextmanager
def serve(db: Path) -> Iterator[str]:
    log = db.with_suffix(".log")
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "mdfts", "serve", str(db), "--port", "0"],
                                stdout=subprocess.DEVNULL, stderr=err)
    try:
        deadline = time.monotonic() + 60
        while not (m := re.search(r"Uvicorn running on (http://127\.0\.0\.1:\d+)", log.read_text())):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise click.ClickException(f"mdfts serve did not start:\n{log.read_text()}")
            time.sleep(0.05)
        yield m.group(1)
    finally:
        proc.terminate()
        proc.wait(10)


def _get(url: str) -> tuple[float, int]:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=300) as resp:
            size = len(resp.read())
    except urllib.error.HTTPError as err:
        raise click.ClickException(f"{url}: HTTP {err.code}: {err.read()[:300]!r}") from None
    return time.perf_counter() - start, size


def pages(db: Path, rounds: int = 2) -> list[str]:
    """Markdown rows: each page kind's time (best of `rounds`) and size, the slowest page, and the
    longest wait of a small request next to 4 concurrent slowest pages."""
    name = db.stem
    rows = ["| page | time | HTML |", "|---|---:|---:|"]
    with serve(db) as base:
        with urllib.request.urlopen(f"{base}/{name}/sections.json?_shape=array&_col=path&_col=chars"
                                    "&_sort_desc=chars&_size=40") as resp:
            listing = json.loads(resp.read())
        urls = {"database": f"/{name}", "sections table": f"/{name}/sections",
                "sections table, searched": f"/{name}/sections?_search=a&_facet=path",
                "search": f"/{name}/search?" + urllib.parse.urlencode({"q": "image links t a x"}),
                "tokens table": f"/{name}/tokens", "documents table": f"/{name}/documents"}
        for r in listing:
            urls.setdefault(f"section {r['path'].rsplit('hostile-pages/', 1)[-1]}", f"/{name}/sections/{r['id']}")
        timed = []
        for label, url in urls.items():
            seconds, size = min(_get(base + url) for _ in range(rounds))
            timed.append((seconds, label, url, size))
        for seconds, label, _, size in sorted(timed, reverse=True)[:12]:
            rows.append(f"| {label} | {seconds * 1000:,.0f} ms | {size / 1024:,.0f} KB |")
        worst = max(timed)
        waits: list[float] = []
        done = threading.Event()

        def ping() -> None:
            while not done.is_set():
                waits.append(_get(f"{base}/-/versions.json")[0])
                time.sleep(0.01)

        refused: list[str] = []

        def hog() -> None:
            try:
                _get(base + worst[2])
            except click.ClickException as err:  # e.g. the time limit under contention: a 400
                refused.append(err.message.split(": ", 2)[1])

        pinger = threading.Thread(target=ping)
        pinger.start()
        hogs = [threading.Thread(target=hog) for _ in range(4)]
        for h in hogs:
            h.start()
        for h in hogs:
            h.join()
        done.set()
        pinger.join()
    rows.append(f"| **slowest page** ({worst[1]}) | **{worst[0] * 1000:,.0f} ms** | |")
    rows.append(f"| longest wait of a small request while 4 of it run | {max(waits) * 1000:,.0f} ms | "
                f"{len(refused)} of the 4 refused ({', '.join(refused) or 'none'}) |")
    return rows


def hostile_index(work: Path, corpora: Sequence[Path] = ()) -> Path:
    """An index of the hostile files (plus `corpora`) in `work`."""
    docs = work / "hostile-pages"
    for rel, text in HOSTILE.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(text)
    db = work / "pages.db"
    build_index([docs, *corpora], db)
    return db


@click.command()
@click.argument("corpora", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--rounds", type=click.IntRange(1), default=2, show_default=True)
def main(corpora: Sequence[Path], rounds: int) -> None:
    """Time `mdfts serve`'s pages on the hostile files of #16 (plus CORPORA)."""
    work = Path(tempfile.mkdtemp(prefix="mdfts-pages-"))
    try:
        click.echo("\n".join(pages(hostile_index(work, corpora), rounds)))
    finally:
        shutil.rmtree(work)
