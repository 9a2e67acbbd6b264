"""Benchmark `build --previous`: full vs incremental build after changing 1% of the files.

    python tests/bench_incremental.py /work/shared/corpora/tldr-common [--changed 0.01] [--runs 3]

Copies the corpus to a temp folder, builds it, edits every Nth file, then times full and
incremental builds side by side (median of --runs each) and checks that their bytes are equal.
Not a unit test: timings depend on the machine; run it by hand or from `make bench`.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from mdfts.build import build_index


def _timed(docs: Path, out: Path, previous: Path | None) -> tuple[float, str, int]:
    started = time.perf_counter()
    result = build_index([docs], out, previous=previous)
    elapsed = time.perf_counter() - started
    return elapsed, hashlib.sha256(out.read_bytes()).hexdigest(), result.reused


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", type=Path)
    ap.add_argument("--changed", type=float, default=0.01, help="share of files to edit (default 0.01)")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        docs = tmp / "docs"
        shutil.copytree(args.corpus, docs)
        old = tmp / "old.db"
        build_index([docs], old)
        files = sorted(p for p in docs.rglob("*.md") if p.is_file())
        step = max(1, round(1 / args.changed))
        edited = files[::step]
        for p in edited:
            with p.open("a", encoding="utf-8") as fh:
                fh.write("\n## Added by the benchmark\n\nSet `MDFTS_BENCH_VAR` before running.\n")
        full, inc = [], []
        digests = set()
        for _ in range(args.runs):  # interleaved, so that load on a shared machine hits both alike
            t, digest, _ = _timed(docs, tmp / "full.db", None)
            full.append(t)
            digests.add(digest)
            t, digest, reused = _timed(docs, tmp / "inc.db", old)
            inc.append(t)
            digests.add(digest)
        f, i = statistics.median(full), statistics.median(inc)
        print(f"corpus      {args.corpus} ({len(files)} files, {len(edited)} edited, {reused} reused)")
        print(f"full        {f:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in full)})")
        print(f"incremental {i:.2f} s  (runs: {', '.join(f'{x:.2f}' for x in inc)})")
        print(f"speed-up    {f / i:.1f}x")
        print(f"identical   {'yes' if len(digests) == 1 else 'NO'}")
        if len(digests) != 1:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
