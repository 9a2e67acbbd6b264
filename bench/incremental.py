"""Time `build --previous` against a full build after changing a share of the files (default 1%).

    python -m bench incremental CORPUS [--changed 0.01] [--runs 3]

Copies the corpus, builds it, edits a seeded sample of the files, then times full and incremental
builds interleaved (median of --runs each) and checks that their bytes are equal. `make bench`
runs the same measurement as its Incremental section.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

import click

from bench.common import corpus_files, md_table
from mdfts.build import build_index
from mdfts.cli import _a_number


@dataclass(frozen=True, slots=True)
class Incremental:
    files: int
    changed: int
    reused: int            # files the last incremental build took from the old index
    full: list[float]      # wall seconds of each full build
    incremental: list[float]
    identical: bool        # every build wrote the same bytes

    @property
    def speedup(self) -> float:
        return statistics.median(self.full) / statistics.median(self.incremental)


def measure(corpus: Path, work: Path, share: float = 0.01, runs: int = 3) -> Incremental:
    """Copy `corpus` under `work`, build it, change `share` of its files, then time full and
    `previous=` builds of the changed tree, interleaved so that load on a shared machine hits both."""
    tree = work / "incremental"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.copytree(corpus, tree)
    old = work / "inc-old.db"
    build_index([tree], old)
    files = corpus_files(tree)
    changed = random.Random(7).sample(files, max(1, round(len(files) * share)))
    for n, p in enumerate(changed):
        with p.open("a", encoding="utf-8") as fh:
            fh.write(f"\n\n## Added by the benchmark ({n})\n\nSet `MDFTS_BENCH_VAR` before running.\n")
    full: list[float] = []
    inc: list[float] = []
    digests = set()
    reused = 0
    for _ in range(runs):
        for out, previous, times in ((work / "inc-full.db", None, full), (work / "inc-new.db", old, inc)):
            started = time.perf_counter()
            result = build_index([tree], out, previous=previous)
            times.append(time.perf_counter() - started)
            digests.add(hashlib.sha256(out.read_bytes()).hexdigest())
            if previous is not None:
                reused = result.reused
    shutil.rmtree(tree, ignore_errors=True)
    return Incremental(len(files), len(changed), reused, full, inc, len(digests) == 1)


def table(r: Incremental) -> str:
    """The result as a markdown table with a line on how it was measured."""
    return md_table(
        ["files", "changed", "reused", "full build s", "reusing the old index s", "speed-up", "same bytes"],
        [[r.files, r.changed, r.reused, statistics.median(r.full), statistics.median(r.incremental),
          f"{r.speedup:.1f}x", "yes" if r.identical else "NO"]],
    ) + (f"\n\nMedians of {len(r.full)} runs, interleaved, in process (`build_index(..., previous=old.db)`, "
         "what `mdfts build --previous` runs).")


@click.command()
@click.argument("corpus", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--changed", type=click.FloatRange(0, 1, min_open=True), default=0.01, show_default=True,
              callback=_a_number, help="Share of the files to edit.")
@click.option("--runs", type=click.IntRange(1, 20), default=3, show_default=True)
def main(corpus: Path, changed: float, runs: int) -> None:
    """Time an incremental rebuild against a full one; exit 1 if their bytes differ.

    \b
    Example:
      python -m bench incremental ../shared/corpora/tldr-common --runs 3
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="mdfts-incremental-") as tmp:
        r = measure(corpus, Path(tmp), changed, runs)
    click.echo(table(r))
    if not r.identical:
        raise click.ClickException("the full and incremental builds wrote different bytes")
