"""Bounds under hostile input: peak build memory at 1x and 8x a corpus, pathological markdown times,
and the cost of huge queries. Prints markdown tables (the figures in docs/bad-input.md).

    python -m mdfts.stress [CORPUS ...] [--times 1,8] [--size 1000000]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

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

_MEASURE = """
import resource, sys, time
from pathlib import Path
from mdfts.build import build_index
t = time.perf_counter()
r = build_index([Path(p) for p in sys.argv[2:]], Path(sys.argv[1]))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - t, r.stats.sections)
"""


def _build_peak(sources: list[Path], out: Path) -> tuple[float, float, int]:
    """(peak RSS in MB, seconds, sections) of a build in a fresh interpreter."""
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(out), *map(str, sources)],
                          capture_output=True, text=True, check=True)
    kb, secs, n = done.stdout.split()
    return int(kb) / 1024, float(secs), int(n)


def _replicate(corpora: list[Path], times: int, into: Path) -> list[Path]:
    """`times` copies of the corpora under `into`, as one source root."""
    for i in range(times):
        for c in corpora:
            shutil.copytree(c, into / f"copy{i}" / c.name, symlinks=True)
    return [into]


def _tree_bytes(root: Path) -> tuple[int, int]:
    sizes = [p.stat().st_size for p in root.rglob("*.md") if p.is_file()]
    return sum(sizes), max(sizes, default=0)


def memory(corpora: list[Path], factors: list[int], work: Path) -> list[str]:
    rows = ["| corpus | markdown | largest file | sections | peak RSS | build time | index |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for k in factors:
        tree = work / f"x{k}"
        roots = _replicate(corpora, k, tree)
        total, largest = _tree_bytes(tree)
        out = work / f"x{k}.db"
        rss, secs, n = _build_peak(roots, out)
        rows.append(f"| {k}x | {total / 2**20:.1f} MB | {largest / 2**10:.0f} KB | {n:,} | {rss:.0f} MB | "
                    f"{secs:.1f} s | {out.stat().st_size / 2**20:.1f} MB |")
        shutil.rmtree(tree)
    for mb in (10, 50):
        one = work / f"one{mb}"
        one.mkdir()
        para = "Restart the payments worker, then check PAYMENTS_DB_URL and run `deploy --force`.\n" * 20
        chunk = "".join(f"## Step {i}\n\n{para}\n" for i in range(100))
        (one / "big.md").write_text("# Big\n\n" + chunk * (mb * 2**20 // len(chunk) + 1))
        rss, secs, n = _build_peak([one], work / f"one{mb}.db")
        rows.append(f"| one {mb} MB file | {mb} MB | {mb} MB | {n:,} | {rss:.0f} MB | {secs:.1f} s | "
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
    from mdfts.search import search

    conn = open_index(db)
    cases = {
        "1,000 terms": " ".join(f"term{i} PAYMENTS_DB_URL --flag-{i}" for i in range(1000)),
        "100 KB of one word repeated": "rollback " * 11_400,
        "100 KB, one 100,000-character word": "x" * 100_000,
        "100 KB of random punctuation": ('"()*^-:.,!?' * 10_000)[:100_000],
    }
    rows = ["| query text | search time |", "|---|---:|"]
    for name, text in cases.items():
        started = time.perf_counter()
        search(conn, text)
        rows.append(f"| {name} | {(time.perf_counter() - started) * 1000:.0f} ms |")
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m mdfts.stress", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("corpora", nargs="*", type=Path, default=[Path("sample/docs")])
    parser.add_argument("--times", default="1,8", help="replication factors, e.g. 1,8")
    parser.add_argument("--size", type=int, default=1_000_000, help="characters per pathological input")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mdfts-stress-") as tmp:
        work = Path(tmp)
        print("## Build memory\n")
        print("\n".join(memory(args.corpora, [int(x) for x in args.times.split(",")], work)), flush=True)
        print("\n## Pathological markdown\n")
        print("\n".join(pathological(args.size)), flush=True)
        print("\n## Query cost (on the largest index above)\n")
        biggest = max(work.glob("x*.db"), key=lambda p: p.stat().st_size)
        print("\n".join(queries(biggest)))


if __name__ == "__main__":
    main()
