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
    # docs site markup (mdfts.parse.docs_site_markup)
    "unclosed `{{<` lines": lambda n: "{{< a\n" * (n // 6),
    "`{{< a >}}` lines": lambda n: "{{< a >}}\n" * (n // 10),
    "`!!! a` and spaces": lambda n: "!!! a" + " " * n + "b\n",
    "`!!! a` lines": lambda n: "!!! a\n" * (n // 6),
    "unclosed `:::a` lines": lambda n: ":::a\n" * (n // 5),
    '`=== "a"` lines': lambda n: '=== "a"\n' * (n // 8),
}

# Inputs for `mdfts check`, which reads more of a file than the build does: id= anchors in its
# raw HTML, and every link.
CHECK_PATHOLOGICAL: dict[str, Callable[[int], str]] = {
    "HTML block of unclosed `<`": lambda n: "<div " + "<" * n,
    "HTML block of `<a id=x `": lambda n: "<div " + "<a id=x " * (n // 8),
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


def check_pathological(size: int, work: Path) -> list[str]:
    """`mdfts check` of one file of each CHECK_PATHOLOGICAL case."""
    from mdfts.check import check_docs

    rows = [f"| input (~{size:,} characters) | characters | check_docs |", "|---|---:|---:|"]
    for i, (name, make) in enumerate(CHECK_PATHOLOGICAL.items()):
        text = make(size)
        one = work / f"check{i}.md"
        one.write_text(text, encoding="utf-8")
        started = time.perf_counter()
        check_docs([one])
        rows.append(f"| {name} | {len(text):,} | {time.perf_counter() - started:.2f} s |")
        one.unlink()
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


# --- the hostile corpus of #16: every reproduction's file together ---------------------------------

def _needle(words: int = 50_000, repeats: int = 30_000) -> str:
    import random

    r = random.Random(1)
    w = [f"w{r.randrange(20000):05d}" for _ in range(words)]
    for i in r.sample(range(words), repeats):
        w[i] = "needle"
    return "# One\n\n" + " ".join(w) + "\n"


def _alias_bomb() -> str:
    levels = ["a: &a [" + ", ".join(['"lol"'] * 9) + "]"]
    levels += [f"{n}: &{n} [{', '.join(['*' + p] * 9)}]" for p, n in zip("abcdefg", "bcdefgh", strict=True)]
    return "---\n" + "\n".join(levels) + "\n---\n# Bomb\n"


HOSTILE_FILES: dict[str, Callable[[], str]] = {
    "snippet/one.md": _needle,  # a word 30,000 times in one 350 KB section
    "tables/t.md": lambda: pages.HOSTILE["table-bomb.md"],
    "yaml/alias-bomb.md": _alias_bomb,
    "yaml/deep.md": lambda: "---\nx: " + "[" * 1000 + "]" * 1000 + "\n---\n# Deep\n",
    "yaml/inf.md": lambda: "---\nweight: .inf\n---\n# Inf\n",
    "pages/link-open.md": lambda: pages.HOSTILE["link-open.md"],
    "pages/image-open.md": lambda: pages.HOSTILE["image-open.md"],
    "terminal/osc52.md": lambda: "# Clip \x1b]52;c;cm0gLXJm\x07\n\nrollback \x1b[2J now\n",
    "diff/headings.md": lambda: "# H\n\n## \\<img src=x\\>\n\n## \\[Approve\\]\\(https://evil\\)\n\n## @user\n",
}

_HOSTILE_CHILD = """
import sys, time
from pathlib import Path
from mdfts.build import build_index
started = time.perf_counter()
r = build_index([Path(p) for p in sys.argv[2:]], Path(sys.argv[1]), on_error="skip", warn=lambda m: None)
seconds = time.perf_counter() - started
hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")][0].split()[1]
print(hwm, seconds, r.stats.sections, len(r.skipped))
"""


def _big_file(dest: Path, corpora: Sequence[Path], mb: int) -> None:
    """`mb` MB of real markdown in one file: the corpora's files one after another, over again."""
    files = [f for c in corpora for f in corpus_files(c)] or corpus_files(Path("sample/docs"))
    written = 0
    with open(dest, "w", encoding="utf-8") as out:
        while written < mb * 2**20:
            for f in files:
                text = f.read_text(encoding="utf-8", errors="replace")
                out.write(text + "\n\n")
                written += len(text.encode()) + 2
                if written >= mb * 2**20:
                    break


def hostile(work: Path, corpora: Sequence[Path], big_mb: int) -> list[str]:
    """Build the hostile corpus (every #16 reproduction, a `big_mb` MB real-markdown file, the
    corpora) in one process; then its slowest search and slowest page, against the targets."""
    import subprocess
    import sys

    from mdfts.index import open_index
    from mdfts.lookup import search

    docs = work / "hostile"
    for rel, make in HOSTILE_FILES.items():
        (docs / rel).parent.mkdir(parents=True, exist_ok=True)
        (docs / rel).write_text(make(), encoding="utf-8")
    if big_mb:
        (docs / "big").mkdir()
        _big_file(docs / "big" / "real.md", corpora, big_mb)
    sizes = [p.stat().st_size for p in docs.rglob("*.md")]
    roots = [docs, *corpora]
    largest = max([*sizes, *(p.stat().st_size for c in corpora for p in corpus_files(c))])
    db = work / "hostile.db"
    done = subprocess.run([sys.executable, "-c", _HOSTILE_CHILD, str(db), *map(str, roots)], capture_output=True,
                          text=True, check=True, env={**__import__("os").environ, "MDFTS_WORKERS": "1"})
    kib, seconds, n_sections, n_skipped = done.stdout.split()
    rss = int(kib) / 1024
    budget = 10 * largest / 2**20 + 64
    queries = ["needle", "needle w00001", "rollback now", "table a x", "links image", "lol bomb", "Clip",
               "Approve evil", " ".join(f"term{i} --flag-{i}" for i in range(1000)), "x" * 100_000]
    times = []
    with open_index(db) as ix:
        for q in queries:
            started = time.perf_counter()
            search(ix, q)
            times.append((time.perf_counter() - started, q))
    slow_search, slow_q = max(times)
    page_rows = pages.pages(db)
    slow_page = next(r for r in page_rows if r.startswith("| **slowest page**"))
    wait = next(r for r in page_rows if r.startswith("| longest wait"))
    page_ms = float(slow_page.split("**")[3].replace(",", "").removesuffix(" ms"))
    wait_ms = float(wait.split(" | ")[1].replace(",", "").removesuffix(" ms"))

    def verdict(ok: bool) -> str:
        return "met" if ok else "**missed**"

    label = slow_q if len(slow_q) < 40 else f"{slow_q[:30]}… ({len(slow_q):,} chars)"
    return [
        f"{len(sizes)} hostile files ({sum(sizes) / 2**20:.1f} MB, largest {max(sizes) / 2**20:.1f} MB) "
        f"plus {len(corpora)} corpora: {n_sections} sections, {n_skipped} files skipped (the YAML bombs), "
        f"built in {float(seconds):.1f} s in one process.",
        "",
        "| measure | figure | target | |",
        "|---|---:|---:|---|",
        f"| build peak RSS (VmHWM, one process) | {rss:,.0f} MB "
        f"| ≤ {budget:,.0f} MB (10 × {largest / 2**20:.1f} MB + 64) "
        f"| {verdict(rss <= budget)} |",
        f"| slowest search (`{label}`) | {slow_search * 1000:,.0f} ms | ≤ 2,000 ms | {verdict(slow_search <= 2)} |",
        f"| slowest page ({slow_page.split('(')[1].split(')')[0]}) | {page_ms:,.0f} ms | ≤ 2,000 ms "
        f"| {verdict(page_ms <= 2000)} |",
        f"| longest wait of a small request beside 4 slowest pages | {wait_ms:,.0f} ms | ≤ 2,000 ms "
        f"| {verdict(wait_ms <= 2000)} |",
        "",
        "Pages, slowest first:",
        "",
        *page_rows,
    ]


@click.command()
@click.argument("corpora", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--times", default="1,8", show_default=True, help="Replication factors, comma-separated.")
@click.option("--size", type=click.IntRange(1), default=1_000_000, show_default=True,
              help="Characters per pathological input.")
@click.option("--with-corpus", "extra", multiple=True, type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A corpus to add to the hostile corpus (the shared corpora, in make stress). Repeatable.")
@click.option("--big-mb", type=click.IntRange(0), default=50, show_default=True,
              help="Size of the one real-markdown file in the hostile corpus; 0 for none.")
def main(corpora: tuple[Path, ...], times: str, size: int, extra: tuple[Path, ...], big_mb: int) -> None:
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
        click.echo("\n## Pathological markdown for `mdfts check`\n")
        click.echo("\n".join(check_pathological(size, work)))
        click.echo("\n## Query cost (on the largest index above)\n")
        biggest = max(work.glob("x*.db"), key=lambda p: p.stat().st_size)
        click.echo("\n".join(queries(biggest)))
        click.echo("\n## The hostile corpus of #16: build memory, slowest search, slowest page\n")
        click.echo("\n".join(hostile(work, extra, big_mb)))
