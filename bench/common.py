"""What the bench scripts share: the corpus replicator, the peak-memory probe and table helpers."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from mdfts.discover import discover

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample"


def log(message: str) -> None:
    click.echo(f"bench: {message}", err=True)


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table; numbers right-aligned."""
    def cell(v: Any) -> str:
        return f"{v:,.2f}" if isinstance(v, float) else str(v)

    cells = [[cell(v) for v in row] for row in rows]
    align = ["---:" if rows and isinstance(rows[0][i], (int, float)) else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(lines)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0-100) of a non-empty sequence."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(p / 100 * len(ordered)))) - 1]


# --- corpora ---------------------------------------------------------------------------------------

def corpus_files(root: Path) -> list[Path]:
    """The markdown files a build of `root` reads, in build order."""
    return [f.abspath for f in discover([root])]


def corpus_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in corpus_files(root))


def replicate(roots: Path | Sequence[Path], dest: Path, copies: int = 0, until_sections: int = 0,
              sections_of: dict[str, int] | None = None) -> Path:
    """Copy the markdown a build of `roots` reads into `dest`, file after file, each copy under its
    own prefix (r0000/, r0001/, ...): `copies` whole copies, or until `until_sections` sections
    (counted with `sections_of`, path → sections, from a build of the one root). With several
    roots each keeps its folder name under the prefix."""
    many = not isinstance(roots, Path)
    sources = list(roots) if not isinstance(roots, Path) else [roots]
    shutil.rmtree(dest, ignore_errors=True)
    files = [(f.abspath, (f"{root.resolve().name}/" if many else "") + f.path)
             for root in sources for f in discover([root])]
    if not files:
        raise click.UsageError(f"{', '.join(map(str, sources))}: no markdown files")
    total, n = 0, 0
    while (copies and n < copies * len(files)) or (until_sections and total < until_sections):
        src, rel = files[n % len(files)]
        target = dest / f"r{n // len(files):04d}" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        total += (sections_of or {}).get(rel, 1)
        n += 1
    return dest


def default_corpus(work: Path, min_bytes: int) -> Path:
    """The bundled sample/docs, replicated to at least `min_bytes`."""
    docs = SAMPLE / "docs"
    if not docs.is_dir():
        raise click.UsageError("no sample/docs in this checkout; give a CORPUS folder")
    return replicate(docs, work / "corpus-sample", copies=-(-min_bytes // corpus_bytes(docs)))


# --- memory ----------------------------------------------------------------------------------------

# The child reads its own peak from /proc (VmHWM). Not ru_maxrss: on Linux it keeps the parent's
# peak across exec, and a bench parent holds whole corpora in memory.
_PEAK_CHILD = """
import sys, time
from pathlib import Path
started = time.perf_counter()
sections = 0
if len(sys.argv) > 2:
    from mdfts.build import build_index
    sections = build_index([Path(p) for p in sys.argv[2:]], Path(sys.argv[1])).stats.sections
else:
    import mdfts.build
    from markdown_it import MarkdownIt
    MarkdownIt("commonmark").parse("# warm\\n")
seconds = time.perf_counter() - started
with open("/proc/self/status") as status:
    kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
print(kib, seconds, sections)
"""


@dataclass(frozen=True, slots=True)
class Peak:
    rss_mb: float   # peak resident memory of the child (VmHWM)
    seconds: float  # wall time of the build inside the child
    sections: int   # 0 when nothing was built


def build_peak(sources: Sequence[Path], out: Path, workers: int | None = None) -> Peak:
    """Peak memory of a build of `sources` into `out` in a fresh interpreter; no sources: the
    peak of importing mdfts.build and markdown-it alone. Linux only (/proc/self/status).

    :param workers: MDFTS_WORKERS for the build; 1 keeps the whole build in the one process
        whose peak is read (worker processes would hold the files in flight beside it).
    """
    if not Path("/proc/self/status").is_file():
        raise click.ClickException("peak memory is read from /proc/self/status (VmHWM): Linux only")
    env = {**os.environ, "MDFTS_WORKERS": str(workers)} if workers else None
    done = subprocess.run([sys.executable, "-c", _PEAK_CHILD, str(out), *map(str, sources)],
                          capture_output=True, text=True, check=True, env=env)
    kib, seconds, sections = done.stdout.split()
    return Peak(int(kib) / 1024, float(seconds), int(sections))


# --- reports ---------------------------------------------------------------------------------------

def portable_command(prog: str, argv: Sequence[str]) -> str:
    """The command line for a report, without this machine's absolute paths: paths inside the
    checkout or beside it (../shared) become relative to the checkout; temporary and other paths
    keep their last part."""
    temp = Path(tempfile.gettempdir()).resolve()
    shown = [prog]
    for arg in argv:
        path = Path(arg)
        if path.is_absolute():
            beside = [] if path.resolve().is_relative_to(temp) else [(REPO.parent, "../")]
            for base, prefix in [(REPO, ""), *beside]:
                if base != Path(base.anchor) and path.is_relative_to(base):
                    arg = prefix + path.relative_to(base).as_posix()
                    break
            else:
                arg = f".../{path.name}"
        shown.append(arg)
    return " ".join(shown)
