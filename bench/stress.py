"""Bounds under hostile input: peak build memory at 1x and 8x a corpus, pathological markdown times,
the cost of huge queries, and the slowest page of `mdfts serve` (bench/pages.py). Prints markdown
tables (the figures in docs/bad-input.md).

    python -m bench stress [CORPUS ...] [--times 1,8] [--size 1000000]
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import click

from bench import pages
from bench.common import build_peak, corpus_files, replicate

# Each case: text of about `n` characters that a markdown parser or our regexes may find slow.
PATHOLOGICAL: dict[str, Callable[[int], str]] = {
    "unclosed `[`": lambda n: "[" * n,
    "unclosed `![`": lambda n: "![" * (n // 2),
    "`[a](` repeated": lambda n: "[a](" * (n // 4),
    "`*a` / `_a` emphasis": lambda n: "*a_a" * (n // 4),
    "backtick runs 1..k wide": lambda n: "".join("`" * i + "a" for i in range(1, int((2 * n) ** 0.5))),
    "`` `a `` repeated": lambda n: "`a" * (n // 2),
    "unclosed `<a ` tags": lambda n: "<a " * (n // 3),
    "unclosed `<!--`": lambda n: "<!--" * (n // 4),
    "heading of `[a](`": lambda n: "# " + "[a](" * (n // 4),
    "heading of backticks": lambda n: "# " + "`a" * (n // 2),
    "5,000-deep quotes": lambda n: "> " * 5000 + "x\n",
    "5,000-deep lists": lambda n: "- " * 5000 + "x\n",
    "one-line table": lambda n: "|a" * (n // 4) + "\n" + "|-" * (n // 4) + "\n",
    "`[a]: b` definitions": lambda n: "[a]: b\n" * (n // 7),
    "50,000 headings": lambda n: "## h\ntext\n" * 50_000,
    "10 MB single line": lambda n: " ".join(f"w{i} `c{i}` [l{i}](u) *e{i}*" for i in range(400_000))[: 10 * 2**20],
}

def memory(corpora: Sequence[Path], factors: Sequence[int], work: Path) -> list[str]:
    rows = ["| corpus | markdown | largest file | sections | peak RSS | build time | index |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for k in factors:
        tree = work / f"x{k}"
        replicate(list(corpora), tree, copies=k)
        sizes = [p.stat().st_size for p in corpus_files(tree)]
        out = work / f"x{k}.db"
        peak = build_peak([tree], out)
        rows.append(f"| {k}x | {sum(sizes) / 2**20:.1f} MB | {max(sizes) / 2**10:.0f} KB | {peak.sections:,} | "
                    f"{peak.rss_mb:.0f} MB | {peak.seconds:.1f} s | {out.stat().st_size / 2**20:.1f} MB |")
        shutil.rmtree(tree)
    for mb in (10, 50):
        one = work / f"one{mb}"
        one.mkdir()
        para = "Restart the payments worker, then check PAYMENTS_DB_URL and run `deploy --force`.\n" * 20
        chunk = "".join(f"## Step {i}\n\n{para}\n" for i in range(100))
        (one / "big.md").write_text("# Big\n\n" + chunk * (mb * 2**20 // len(chunk) + 1))
        peak = build_peak([one], work / f"one{mb}.db")
        rows.append(f"| one {mb} MB file | {mb} MB | {mb} MB | {peak.sections:,} | {peak.rss_mb:.0f} MB | "
                    f"{peak.seconds:.1f} s | "
                    f"{(work / f'one{mb}.db').stat().st_size / 2**20:.1f} MB |")
        shutil.rmtree(one)
    return rows


def pathological(size: int) -> list[str]:
    from mdfts.sections import split_sections

    rows = [f"| input (~{size:,} characters unless named) | characters | split_sections |", "|---|---:|---:|"]
    for name, make in PATHOLOGICAL.items():
        text = make(size)
        started = time.perf_counter()
        split_sections("x.md", text)
        rows.append(f"| {name} | {len(text):,} | {time.perf_counter() - started:.2f} s |")
    return rows


def queries(db: Path) -> list[str]:
    from mdfts.index import open_index
    from mdfts.lookup import search

    cases = {
        "1,000 terms": " ".join(f"term{i} PAYMENTS_DB_URL --flag-{i}" for i in range(1000)),
        "100 KB of one word repeated": "rollback " * 11_400,
        "100 KB, one 100,000-character word": "x" * 100_000,
        "100 KB of random punctuation": ('"()*^-:.,!?' * 10_000)[:100_000],
    }
    rows = ["| query text | search time |", "|---|---:|"]
    with open_index(db) as ix:
        for name, text in cases.items():
            started = time.perf_counter()
            search(ix, text)
            rows.append(f"| {name} | {(time.perf_counter() - started) * 1000:.0f} ms |")
    return rows


@click.command()
@click.argument("corpora", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--times", default="1,8", show_default=True, help="Replication factors, comma-separated.")
@click.option("--size", type=click.IntRange(1), default=1_000_000, show_default=True,
              help="Characters per pathological input.")
def main(corpora: tuple[Path, ...], times: str, size: int) -> None:
    """Print build memory at each --times, pathological markdown times and huge-query costs.

    CORPORA are folders of markdown (default: sample/docs).

    \b
    Example:
      python -m bench stress ../shared/corpora/tldr-common --times 1,8
    """
    try:
        factors = [int(x) for x in times.split(",")]
    except ValueError:
        raise click.UsageError(f"--times {times!r}: give whole numbers separated by commas") from None
    with tempfile.TemporaryDirectory(prefix="mdfts-stress-") as tmp:
        work = Path(tmp)
        click.echo("## Build memory\n")
        click.echo("\n".join(memory(corpora or (Path("sample/docs"),), factors, work)))
        click.echo("\n## Pathological markdown\n")
        click.echo("\n".join(pathological(size)))
        click.echo("\n## Query cost (on the largest index above)\n")
        biggest = max(work.glob("x*.db"), key=lambda p: p.stat().st_size)
        click.echo("\n".join(queries(biggest)))
        click.echo("\n## Pages of `mdfts serve` (the hostile files of #16, plus the corpora)\n")
        click.echo("\n".join(pages.pages(pages.hostile_index(work, corpora or (Path("sample/docs"),)))))
