"""`make bench`: build and query speed, size and memory, side by side with the floor and the alternatives.

Every figure is a median of runs made in the same process on the same machine, next to the figure it
is compared with, so a busy machine moves both. Run `python -m bench speed --help`.
"""

from __future__ import annotations

import contextlib
import functools
import heapq
import itertools
import json
import math
import os
import platform
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from bench import incremental
from bench.common import (
    SAMPLE,
    build_peak,
    corpus_bytes,
    corpus_files,
    default_corpus,
    log,
    md_table,
    percentile,
    portable_command,
    replicate,
)
from mdfts.build import build_index
from mdfts.index import connect
from mdfts.queries import get_query, run_query

TARGETS = {  # issue #15 (issue #7 set the first ones)
    "build_ratio": 1.5, "build_ratio_goal": 1.0, "size_ratio": 2.5, "rss_8x_mb": 64.0,
    "search_p50_ms": 5.0, "search_p95_ms": 20.0, "search_p99_1m_ms": 60.0, "vs_match_10k": 1.5,
    "oneshot_vs_python": 2.5, "incremental_speedup": 5.0, "rss_1m_mb": 128.0, "rss_goal_mb": 64.0,
}
# Methods that hold every section in Python and answer in O(sections) Python work: left out of the
# indexes above this size, where one query takes seconds.
IN_PYTHON_UP_TO = 200_000
_WORD = re.compile(r"\w+")


@dataclass(slots=True)
class Settings:
    runs: int = 3              # medians of this many runs
    min_bytes: int = 20_000_000  # the default corpus: sample/docs replicated to at least this
    sizes: tuple[int, ...] = (10_000, 100_000)  # sections in the query-benchmark indexes
    queries: int = 200
    passes: int = 3  # each query's time is its fastest of this many passes (methods interleaved)
    multiples: tuple[int, ...] = (1, 8)  # corpus copies for the peak-RSS builds
    oneshot_runs: int = 15  # 7 moved from 4.7x to 12x with the machine's load
    large: bool = False  # also an index of ~1M sections (--large): long on a small machine


QUICK = Settings(runs=1, min_bytes=200_000, sizes=(1_000,), queries=20, passes=1, multiples=(1, 2),
                 oneshot_runs=2)


@dataclass(slots=True)
class Report:
    sections: list[str] = field(default_factory=list)
    targets: list[tuple[str, str, str, str]] = field(default_factory=list)  # what, target, measured, verdict

    def add(self, title: str, text: str) -> None:
        block = f"## {title}\n\n{text.rstrip()}\n"
        self.sections.append(block)
        click.echo(block)

    def target(self, what: str, target: str, value: float, limit: float, unit: str,
               higher_is_better: bool = False) -> None:
        ok = value >= limit if higher_is_better else value <= limit
        if ok:
            verdict = "met"
        elif higher_is_better:
            verdict = f"missed: {value / limit * 100:.0f}% of the target"
        else:
            verdict = f"missed by {(value / limit - 1) * 100:.0f}%"
        self.targets.append((what, target, f"{value:.2f}{unit}", verdict))


# --- small helpers ---------------------------------------------------------------------------------

def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def _clocked(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, result). On a shared machine the CPU time
    moves far less with the load than the wall time does."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def machine() -> list[tuple[str, str]]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    ram = "?"
    with contextlib.suppress(OSError, ValueError, IndexError):
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:", 1)[1].split()[0])
        ram = f"{kb / 1024 / 1024:.1f} GiB"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    from importlib.metadata import version

    return [
        ("CPU", cpu), ("cores", str(os.cpu_count())), ("RAM", ram),
        ("load average at start (1, 5, 15 min)", load),
        ("OS", platform.platform()),
        ("Python", platform.python_version()), ("SQLite", sqlite3.sqlite_version),
        ("markdown-it-py", version("markdown-it-py")),
    ]


# --- corpora ---------------------------------------------------------------------------------------

# --- build -----------------------------------------------------------------------------------------

def commonmark_floor(texts: Sequence[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one plain MarkdownIt("commonmark").parse() of every text: the floor."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark")

    def parse_all() -> None:
        for text in texts:
            md.parse(text)

    wall, cpu, _ = _clocked(parse_all)
    return wall, cpu


# build_index's stages (BuildResult.stages), then the steps of its write stage's finish.
STAGES = (
    ("discover", "discover"), ("provenance", "git provenance"), ("read", "read + decode"),
    ("parse", "parse (block level)"), ("split", "split (sections, headings, plain text)"),
    ("tokens", "extract exact tokens"), ("write", "write (rows, then the steps below)"),
)
WRITE_STEPS = (
    ("fts_rebuild", "· FTS rebuild"), ("derive", "· derive (term_df, token_df)"), ("meta", "· meta and queries"),
    ("fts_optimize", "· FTS optimize"), ("vacuum", "· VACUUM INTO"), ("replace", "· fsync + rename"),
)


def block_floor(texts: Sequence[str]) -> float:
    """CPU seconds of the block-level parse mdfts runs (mdfts.parse.parse_blocks) of every text."""
    from mdfts.parse import parse_blocks

    started = time.process_time()
    for text in texts:
        parse_blocks(text)
    return time.process_time() - started


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def parallel_build(corpus: Path, out: Path) -> tuple[float, float, int]:
    """(wall s, CPU s of this process and its workers, workers) of a build with the default
    number of worker processes (mdfts.workers.default_workers)."""
    from mdfts.discover import discover
    from mdfts.workers import default_workers

    workers = default_workers(len(discover([corpus])))
    children = _children_cpu()
    wall, cpu, _ = _clocked(functools.partial(build_index, [corpus], out, workers=workers))
    return wall, cpu + _children_cpu() - children, workers


def bench_build(corpus: Path, work: Path, s: Settings) -> dict[str, Any]:
    """Build `corpus` `s.runs` times in one process, each next to a commonmark parse and mdfts's
    block parse of the same files; then once with worker processes. Medians."""
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in corpus_files(corpus)]
    size = corpus_bytes(corpus)
    out = work / f"{corpus.name}.db"
    floors: list[tuple[float, float]] = []
    blocks: list[float] = []
    builds: list[tuple[float, float]] = []
    stage_runs = []
    result = None
    for run in range(s.runs):
        floors.append(commonmark_floor(texts))
        blocks.append(block_floor(texts))
        # One process: the CPU ratio is this process's (the stages would count workers' too).
        wall, cpu, result = _clocked(functools.partial(build_index, [corpus], out, workers=1))
        builds.append((wall, cpu))
        stage_runs.append({**result.stages.seconds, **result.stages.write_steps})
        log(f"{corpus.name} run {run + 1}/{s.runs}: build {wall:.2f}s wall, {cpu:.2f}s CPU; "
             f"commonmark parse {floors[-1][0]:.2f}s wall, {floors[-1][1]:.2f}s CPU")
    assert result is not None
    par_wall, par_cpu, workers = parallel_build(corpus, work / f"{corpus.name}-parallel.db")
    log(f"{corpus.name}: build with {workers} worker processes {par_wall:.2f}s wall, {par_cpu:.2f}s CPU")
    stages = {k: statistics.median(t.get(k, 0.0) for t in stage_runs) for k, _ in STAGES + WRITE_STEPS}
    return {
        "name": corpus.name, "path": str(corpus), "files": len(texts), "bytes": size,
        "sections": result.stats.sections, "tokens": result.stats.tokens, "db": out,
        "db_bytes": result.stats.bytes, "stages": stages,
        "build_s": statistics.median(w for w, _ in builds), "build_cpu": statistics.median(c for _, c in builds),
        "floor_s": statistics.median(w for w, _ in floors), "floor_cpu": statistics.median(c for _, c in floors),
        "block_cpu": statistics.median(blocks), "par_wall": par_wall, "par_cpu": par_cpu, "workers": workers,
    }


def space_by_table(db: Path) -> list[tuple[str, int]]:
    """Bytes per table and index, largest first (SQLite's dbstat table; [] where it is not built in)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute("select name, sum(pgsize) from dbstat group by name order by 2 desc, 1").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


# --- queries ---------------------------------------------------------------------------------------

# Role questions take another path through search.sql (`role`), which the other kinds never reach.
_ROLE_FORMS = ("how do I fix {}", "why does {} fail", "what does {} mean")


def realistic_queries(db: Path, n: int, seed: int = 7) -> list[str]:
    """`n` queries of the kinds people type, drawn from the index: heading words, questions,
    questions that ask for a section's role ("how do I fix …", "why does … fail"), exact tokens
    alone and with words, and words from a section's text; plus the bundled labelled queries
    when the index holds the sample."""
    rng = random.Random(seed)
    conn = connect(db)
    headings = [h for (h,) in conn.execute("select heading from sections where level > 0 order by id")]
    toks = conn.execute("select t.token, s.heading from tokens t join sections s on s.id = t.section_id "
                        "order by t.section_id, t.norm").fetchall()
    bodies = [b for (b,) in conn.execute("select body from sections order by id limit 20000")]
    conn.close()
    out = _labelled_queries(db)[: n // 4]
    def words(text: str) -> list[str]:
        return [w for w in _WORD.findall(text.lower()) if len(w) > 2 and not w.isdigit()]

    makers: list[Callable[[], str]] = [
        lambda: " ".join(words(rng.choice(headings))[:4]),
        lambda: "how do I " + " ".join(words(rng.choice(headings))[:3]),
        lambda: rng.choice(_ROLE_FORMS).format(" ".join(words(rng.choice(headings))[:2])),
        lambda: rng.choice(toks)[0],
        lambda: " ".join([(t := rng.choice(toks))[0], *words(t[1])[:2]]),
        lambda: " ".join(rng.sample(ws, min(3, len(ws)))) if (ws := words(rng.choice(bodies))) else "",
    ]
    while len(out) < n:
        q = makers[len(out) % len(makers)]() if headings and toks else " ".join(words(rng.choice(bodies))[:3])
        if q.strip():
            out.append(q)
    return out


def _labelled_queries(db: Path) -> list[str]:
    """The bundled sample's labelled queries, when the index holds the sample (replicated or not)."""
    labelled = SAMPLE / "queries.jsonl"
    if not labelled.is_file():
        return []
    items = [json.loads(line) for line in labelled.read_text(encoding="utf-8").splitlines() if line.strip()]
    conn = connect(db)
    try:
        gold = items[0]["gold"][0]["path"] if items else ""
        found = conn.execute("select 1 from documents where path = ? or path like ? limit 1",
                             (gold, "%/" + gold)).fetchone()
    finally:
        conn.close()
    return [item["q"] for item in items] if found else []


def _latencies(fn: Callable[[str], Any], queries: Sequence[str]) -> list[float]:
    times = []
    for q in queries:
        started = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - started) * 1000)
    return times


def interleaved_latencies(methods: dict[str, Callable[[str], Any]], queries: Sequence[str], passes: int,
                          clock: Callable[[], float] = time.perf_counter) -> dict[str, list[float]]:
    """Each method's ms per query, the fastest of `passes` passes: every query is asked of every
    method in turn (the order rotating from pass to pass), so a burst of load on this shared
    machine slows all methods alike instead of one method's whole run, and the minimum keeps
    what the code costs rather than what the other jobs cost (timeit's rule)."""
    names = list(methods)
    best: dict[str, list[float]] = {name: [float("inf")] * len(queries) for name in names}
    for n in range(passes):
        for i, q in enumerate(queries):
            for k in range(len(names)):
                name = names[(i + n + k) % len(names)]
                started = clock()
                methods[name](q)
                best[name][i] = min(best[name][i], (clock() - started) * 1000)
    return best


def _or_match(q: str) -> str:
    return " OR ".join(f'"{w}"' for w in dict.fromkeys(_WORD.findall(q.lower())))


def _words(q: str) -> list[str]:
    return list(dict.fromkeys(_WORD.findall(q.lower())))


def query_methods(db: Path, sections: int, work: Path
                  ) -> tuple[dict[str, Callable[[str], Any]], dict[str, str], list[str]]:
    """The ways to answer a query compared here, each ready to call; their setup (seconds, and
    bytes where they keep an index on disk); and the methods left out at this size, with why."""
    conn = connect(db)
    search_sql = get_query(conn, "search")
    methods: dict[str, Callable[[str], Any]] = {
        "search.sql (mdfts)": lambda q: run_query(conn, search_sql, {"q": q, "limit": 10}),
        "bare bm25 MATCH (OR of words)": lambda q: conn.execute(
            "select rowid from sections_fts where sections_fts match ? order by bm25(sections_fts) limit 10",
            (_or_match(q) or '""',)).fetchall(),
    }
    setup: dict[str, str] = {}
    left_out: list[str] = []
    # The peers index the same sections mdfts does: path, trail (the headings) and body.
    rows = [(i, p, " > ".join(json.loads(t)), b) for i, p, t, b in
            conn.execute("select id, path, trail, body from sections_full order by id")]
    _add_tantivy(methods, setup, left_out, rows, work / f"tantivy-{sections}")
    _add_bm25s(methods, setup, left_out, rows)
    if sections > IN_PYTHON_UP_TO:
        left_out.append(f"linear scan and rank-bm25 (O(sections) Python work a query; run up to "
                        f"{IN_PYTHON_UP_TO:,} sections)")
        return methods, setup, left_out
    started = time.perf_counter()
    bodies = [b.lower() for _, _, _, b in rows]
    setup["linear scan (count words per section)"] = f"{time.perf_counter() - started:.2f}s"

    def scan(q: str) -> list[int]:
        ws = _words(q)
        scores = [sum(b.count(w) for w in ws) for b in bodies]
        return heapq.nlargest(10, range(len(scores)), key=scores.__getitem__)

    methods["linear scan (count words per section)"] = scan
    try:
        import numpy as np
        from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]
    except ImportError:
        left_out.append("rank-bm25 (not installed: pip install 'mdfts[bench]')")
    else:
        started = time.perf_counter()
        pages = [_WORD.findall(t.lower()) for (t,) in conn.execute(
            "select group_concat(body, char(10)) from sections group by document_id order by document_id")]
        bm25 = BM25Okapi(pages)
        setup["rank-bm25 over whole pages (in process)"] = f"{time.perf_counter() - started:.2f}s"

        def okapi(q: str) -> Any:
            scores = bm25.get_scores(_WORD.findall(q.lower()))
            return np.argsort(-scores)[:10]

        methods["rank-bm25 over whole pages (in process)"] = okapi
    return methods, setup, left_out


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _add_tantivy(methods: dict[str, Callable[[str], Any]], setup: dict[str, str], left_out: list[str],
                 rows: Sequence[tuple[int, str, str, str]], where: Path) -> None:
    """tantivy (Rust, via its Python bindings): an on-disk index of the sections, BM25, top 10."""
    try:
        import tantivy
    except ImportError:
        left_out.append("tantivy (not installed: pip install 'mdfts[bench]')")
        return
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    started = time.perf_counter()
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True)
    for name in ("path", "trail", "body"):
        builder.add_text_field(name, stored=False)
    index = tantivy.Index(builder.build(), path=str(where))
    writer = index.writer(heap_size=64_000_000, num_threads=1)
    for sid, path, trail, body in rows:
        writer.add_document(tantivy.Document(id=sid, path=path, trail=trail, body=body))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    searcher = index.searcher()
    setup["tantivy (BM25, on disk)"] = f"{time.perf_counter() - started:.2f}s, {_dir_bytes(where) / 1e6:.1f} MB"

    def search(q: str) -> Any:
        words = _words(q)  # plain words: tantivy's query syntax would read AND, -x, a:b
        if not words:
            return []
        hits = searcher.search(index.parse_query(" ".join(words), ["path", "trail", "body"]), 10).hits
        return [searcher.doc(address)["id"] for _, address in hits]

    methods["tantivy (BM25, on disk)"] = search


def _add_bm25s(methods: dict[str, Callable[[str], Any]], setup: dict[str, str], left_out: list[str],
               rows: Sequence[tuple[int, str, str, str]]) -> None:
    """bm25s (sparse matrices in numpy), in memory over the same sections, no stemmer."""
    try:
        import bm25s  # type: ignore[import-untyped]
    except ImportError:
        left_out.append("bm25s (not installed: pip install 'mdfts[bench]')")
        return
    started = time.perf_counter()
    texts = [f"{path} {trail} {body}" for _, path, trail, body in rows]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
    del texts
    vocab = retriever.vocab_dict
    setup["bm25s (in process)"] = f"{time.perf_counter() - started:.2f}s"
    k = min(10, len(rows))

    def search(q: str) -> Any:
        words = [w for w in _words(q) if w in vocab]
        if not words:
            return []
        docs, _ = retriever.retrieve([words], k=k, show_progress=False, n_threads=1)
        return docs[0]

    methods["bm25s (in process)"] = search


def bench_queries(db: Path, sections: int, s: Settings, work: Path
                  ) -> tuple[list[list[Any]], dict[str, dict[str, float]], list[str]]:
    """Rows of the query table, {method: {p50, p95, p99}}, and the methods left out."""
    queries = realistic_queries(db, s.queries)
    methods, setup, left_out = query_methods(db, sections, work)
    rows: list[list[Any]] = []
    p: dict[str, dict[str, float]] = {}
    for fn in methods.values():
        for q in queries[:5]:  # warm-up: page cache, prepared statements
            fn(q)
    latencies = interleaved_latencies(methods, queries, s.passes)
    for name, times in latencies.items():
        p[name] = {f"p{n}": percentile(times, n) for n in (50, 95, 99)}
        rows.append([f"{sections:,}", name, len(queries), p[name]["p50"], p[name]["p95"], p[name]["p99"],
                     max(times), setup.get(name, "-")])
        log(f"{sections} sections, {name}: p50 {p[name]['p50']:.2f} ms, p95 {p[name]['p95']:.2f} ms, "
            f"p99 {p[name]['p99']:.2f} ms")
    return rows, p, left_out


def cold_open_ms(db: Path, queries: Sequence[str]) -> float:
    """Median ms from opening the file to the first search.sql rows, a fresh connection each time
    (the OS page cache stays warm: dropping it needs root and hurts everyone on the machine)."""
    from mdfts.lookup import search

    return statistics.median(_latencies(lambda q: search(db, q, limit=10), queries))


def compile_ms(db: Path, q: str, runs: int = 5) -> float:
    """Median ms to compile search.sql alone, on a fresh connection: the part of a cold query that
    is the same whatever the index size. An EXPLAIN of it, less a second EXPLAIN of the same text,
    which Python's statement cache answers from the statement already compiled: what is left is
    the compile, not the listing of its ~8,000 operations (~5 ms, which the first form counted)."""
    times = []
    for _ in range(runs):
        conn = connect(db)
        query = get_query(conn, "search")
        bound = {p: None for p in query.params} | {"q": q}
        lap = []
        for _ in range(2):
            started = time.perf_counter()
            conn.execute("explain " + query.sql, bound).fetchall()
            lap.append((time.perf_counter() - started) * 1000)
        times.append(lap[0] - lap[1])
        conn.close()
    return statistics.median(times)


def _mdfts_exe() -> list[str]:
    exe = Path(sys.executable).with_name("mdfts")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "mdfts"]


def _compile_package() -> None:
    """Write mdfts's bytecode, as installing a wheel does: an editable tree run with
    PYTHONDONTWRITEBYTECODE set has none, and each process compiled every module it imported
    (~15 ms of a one-shot search)."""
    import compileall

    import mdfts

    compileall.compile_dir(Path(mdfts.__file__).parent, quiet=1)


def oneshot_ms(db: Path, queries: Sequence[str], runs: int) -> tuple[float, float, float]:
    """Median wall ms of a whole `mdfts search DB Q` process, of `python -c pass` for scale, and of
    a process that only imports what the one-shot path imports; interleaved."""
    def wall(cmd: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        return (time.perf_counter() - started) * 1000

    _compile_package()
    search, bare, imports = [], [], []
    for i in range(runs):
        # "--" first: a query can be a CLI flag that the docs mention (`--force-with-lease`).
        search.append(wall([*_mdfts_exe(), "search", str(db), "--", queries[i % len(queries)]]))
        bare.append(wall([sys.executable, "-c", "pass"]))
        imports.append(wall([sys.executable, "-c", "import mdfts.entry, mdfts.commands, mdfts.lookup"]))
    return statistics.median(search), statistics.median(bare), statistics.median(imports)


def query_path_imports(db: Path, q: str) -> tuple[list[tuple[str, int]], list[str]]:
    """The slowest imports of `python -X importtime -m mdfts search` (µs, cumulative), and which
    heavy build-only modules (markdown_it, sqlite_utils, yaml) were imported at all."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "mdfts", "search", str(db), "--", q],
                          capture_output=True, text=True, check=True)
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((parts[2].rstrip(), int(parts[1])))
    top = [(name.strip(), us) for name, us in rows if not name.startswith("    ")]
    top.sort(key=lambda r: -r[1])
    build_only = {"markdown_it", "sqlite_utils", "yaml", "mdit_py_plugins"}
    heavy = sorted({n.strip().split(".")[0] for n, _ in rows} & build_only)
    return top[:6], heavy


# --- incremental -----------------------------------------------------------------------------------

# --- the run ---------------------------------------------------------------------------------------

def _space_note(build: dict[str, Any]) -> str:
    space = space_by_table(build["db"])
    if not space:
        return ""
    shown = [(name, f"{size:,}", f"{size / build['db_bytes'] * 100:.0f}%", f"{size / build['bytes']:.2f}x")
             for name, size in space[:8]]
    return (f"\n\nWhere the bytes of the {build['name']} index go (dbstat):\n\n"
            + md_table(["table or index", "bytes", "of the index", "of the corpus"], shown))


def exponent(a: float, b: float, n_a: int, n_b: int) -> float:
    """k in t ~ n^k between two sizes: 1 is linear, 0 flat."""
    return math.log(b / a) / math.log(n_b / n_a) if a > 0 and b > 0 and n_b != n_a else float("nan")


def growth_table(scale: Sequence[dict[str, Any]]) -> str:
    """Growth exponents between consecutive sizes, for the index, the build and each method's times."""
    pairs = list(itertools.pairwise(scale))
    heads = ["what", *[f"{a['n']:,} → {b['n']:,}" for a, b in pairs]]
    rows: list[list[Any]] = [
        ["index bytes", *[f"{exponent(a['bytes'], b['bytes'], a['n'], b['n']):.2f}" for a, b in pairs]],
        ["build wall s", *[f"{exponent(a['build_s'], b['build_s'], a['n'], b['n']):.2f}" for a, b in pairs]],
        ["build peak RSS", *[f"{exponent(a['rss'], b['rss'], a['n'], b['n']):.2f}" for a, b in pairs]],
    ]
    for method in scale[0]["p"]:
        for q in ("p50", "p95", "p99"):
            cells = [f"{exponent(a['p'][method][q], b['p'][method][q], a['n'], b['n']):.2f}"
                     if method in a["p"] and method in b["p"] else "-" for a, b in pairs]
            rows.append([f"{method} {q}", *cells])
    return (md_table(heads, rows) + "\n\nk in t ∝ sections^k between two sizes, from the figures above: 1 is "
            "linear, 0 does not grow. A method left out at a size shows -.")


def run(corpora: Sequence[Path], s: Settings, work: Path, command: str) -> Report:
    report = Report()
    report.add("Machine", md_table(["", ""], machine()) + f"\n\nCommand: `{command}`")
    if not corpora:
        corpora = [default_corpus(work, s.min_bytes)]
        log(f"default corpus: sample/docs replicated to {corpus_bytes(corpora[0]):,} bytes")

    builds = [bench_build(c, work, s) for c in corpora]
    report.add("Build", md_table(
        ["corpus", "files", "MB", "sections", "build s wall", "build s CPU", "MB/s (CPU)",
         "commonmark parse s CPU", "build / parse (CPU)", "block parse s CPU", "build / block parse (CPU)",
         "workers", "parallel s wall", "parallel s CPU"],
        [[b["name"], b["files"], b["bytes"] / 1e6, b["sections"], b["build_s"], b["build_cpu"],
          b["bytes"] / 1e6 / b["build_cpu"], b["floor_cpu"], f"{b['build_cpu'] / b['floor_cpu']:.2f}x",
          b["block_cpu"], f"{b['build_cpu'] / b['block_cpu']:.2f}x", b["workers"], b["par_wall"], b["par_cpu"]]
         for b in builds],
    ) + f"\n\nMedians of {s.runs} runs of a one-process build (`workers=1`), each next to a plain "
        "`MarkdownIt(\"commonmark\").parse()` (the full parse: the floor the targets name) and to the "
        "block-level parse mdfts runs (`mdfts.parse.parse_blocks`: inline rules off, tables and front "
        "matter on) of the same files, already in memory, in the same process. The ratio that counts is "
        "the CPU one: on this shared machine a run's wall time moves with the other jobs far more than "
        "its CPU time does. Then one build with worker processes (`mdfts.workers`, one per core up to 4): "
        "its CPU is this process's plus the workers'; its wall time gains only when a core is free.")
    report.add("Build stages", md_table(
        ["stage", *[b["name"] for b in builds]],
        [[label, *[f"{b['stages'][k]:.2f}s ({b['stages'][k] / b['build_cpu'] * 100:.0f}%)" for b in builds]]
         for k, label in STAGES + WRITE_STEPS],
    ) + "\n\nMedian CPU seconds per stage of the one-process builds (share of the build's CPU time), "
        "as the build records them (`BuildResult.stages`); the · rows are part of write.")
    report.add("Size", md_table(
        ["corpus", "corpus bytes", "index bytes", "index / corpus", "exact tokens"],
        [[b["name"], f"{b['bytes']:,}", f"{b['db_bytes']:,}", f"{b['db_bytes'] / b['bytes']:.2f}x", f"{b['tokens']:,}"]
         for b in builds],
    ) + _space_note(builds[0]))
    for b in builds:
        ratio = b["build_cpu"] / b["floor_cpu"]
        report.target(f"build / commonmark parse, CPU ({b['name']})", "<= 1.5x (goal <= 1x)", ratio,
                      TARGETS["build_ratio"], "x")
        report.target(f"index / corpus bytes ({b['name']})", "<= 2.5x", b["db_bytes"] / b["bytes"],
                      TARGETS["size_ratio"], "x")

    rss_rows = []
    base_rss = build_peak([], work / "unused.db").rss_mb
    for b in builds:
        for m in s.multiples:
            src = Path(b["path"]) if m == 1 else replicate(Path(b["path"]), work / f"x{m}-{b['name']}", copies=m)
            mb = corpus_bytes(src)
            peak = build_peak([src], work / f"x{m}.db", workers=1)
            rss, wall = peak.rss_mb, peak.seconds
            rss_rows.append([b["name"], f"{m}x", mb / 1e6, peak.sections, rss, wall])
            log(f"{b['name']} {m}x: peak RSS {rss:.1f} MB")
            if m == max(s.multiples):
                report.target(f"peak RSS at {m}x ({b['name']})", "<= 64 MB at 8x", rss, TARGETS["rss_8x_mb"], " MB")
            if m != 1:
                shutil.rmtree(src, ignore_errors=True)

    first = builds[0]
    counts = dict(sqlite3.connect(first["db"]).execute("select path, sections from documents").fetchall())
    qrows: list[list[Any]] = []
    extra: list[str] = []
    left: list[str] = []
    scale: list[dict[str, Any]] = []  # per size: sections, bytes, build s, RSS, {method: percentiles}
    sizes = tuple(sorted(set(s.sizes) | ({1_000_000} if s.large else set())))
    for n in sizes:
        tree = replicate(Path(first["path"]), work / f"q{n}", until_sections=n, sections_of=counts)
        db = work / f"q{n}.db"
        built = build_peak([tree], db, workers=1)  # a fresh process: its peak RSS is this size's
        tree_mb = corpus_bytes(tree) / 1e6
        shutil.rmtree(tree, ignore_errors=True)
        log(f"query index: {built.sections:,} sections, built in {built.seconds:.1f}s, peak RSS {built.rss_mb:.1f} MB")
        rss_rows.append([f"query index {built.sections:,} sections", "-", tree_mb, built.sections,
                         built.rss_mb, built.seconds])
        rows, p, left_out = bench_queries(db, built.sections, s, work)
        shutil.rmtree(work / f"tantivy-{built.sections}", ignore_errors=True)
        qrows += rows
        left += [f"{built.sections:,} sections: {why}" for why in left_out]
        scale.append({"n": built.sections, "bytes": db.stat().st_size, "build_s": built.seconds,
                      "rss": built.rss_mb, "p": p})
        qs = realistic_queries(db, 9, seed=11)
        cold = cold_open_ms(db, qs)
        compiling = compile_ms(db, qs[0])
        shot, bare, imports = oneshot_ms(db, qs, s.oneshot_runs)
        extra.append(f"- {built.sections:,} sections ({db.stat().st_size / 1e6:.1f} MB index): cold open to first "
                     f"search.sql result {cold:.1f} ms (median of {len(qs)}, in process; compiling "
                     f"search.sql alone takes {compiling:.1f} ms of it); one-shot "
                     f"`mdfts search` process {shot:.0f} ms wall, {shot / bare:.2f}x `python -c pass` "
                     f"({bare:.0f} ms), a process importing the one-shot path alone {imports:.0f} ms "
                     f"({imports / bare:.2f}x; medians of {s.oneshot_runs}, interleaved)")
        search, match = p["search.sql (mdfts)"], p["bare bm25 MATCH (OR of words)"]
        at = f"at {built.sections:,} sections"
        if n == min(sizes):
            report.target(f"search.sql p50 / bare MATCH p50 {at}", "<= 1.5x", search["p50"] / match["p50"],
                          TARGETS["vs_match_10k"], "x")
            # At the smallest size, where the process's start and imports weigh most (at 100k the
            # query itself is most of it, and search.sql has targets of its own).
            report.target(f"one-shot `mdfts search` / `python -c pass` {at}", "<= 2.5x", shot / bare,
                          TARGETS["oneshot_vs_python"], "x")
        if n == 100_000:
            report.target(f"search.sql p50 {at}", "<= 5 ms", search["p50"], TARGETS["search_p50_ms"], " ms")
            report.target(f"search.sql p95 {at}", "<= 20 ms", search["p95"], TARGETS["search_p95_ms"], " ms")
        if n == 1_000_000:
            report.target(f"search.sql p99 {at}", "<= 60 ms", search["p99"], TARGETS["search_p99_1m_ms"], " ms")
            report.target(f"peak RSS of the build {at}", "<= 128 MB (goal 64)", built.rss_mb,
                          TARGETS["rss_1m_mb"], " MB")
        if n == max(sizes):
            top, heavy = query_path_imports(db, qs[0])
            extra.append("- `python -X importtime -m mdfts search`: slowest top-level imports "
                         + ", ".join(f"{name} {us / 1000:.1f} ms" for name, us in top)
                         + "; build-only modules imported: " + (", ".join(heavy) or "none"))
    report.add("Memory", md_table(["build", "copies", "MB", "sections", "peak RSS MB", "build wall s"], rss_rows)
               + f"\n\nEach build in a fresh process, with no worker processes (`MDFTS_WORKERS=1`): the peak RSS "
                 f"(VmHWM) is the whole build's. With workers, each holds only the files in flight (a bounded "
                 f"window) beside the parent. For scale: importing mdfts.build and markdown-it alone peaks at "
                 f"{base_rss:.1f} MB.")
    report.add("Query", md_table(["sections", "method", "queries", "p50 ms", "p95 ms", "p99 ms", "max ms", "setup"],
                                 qrows)
               + f"\n\nEach method answers the same {s.queries} queries (heading words, questions, role questions "
                 "such as \"how do I fix …\", exact tokens alone and with words, words from a section; "
                 "seeded) for the top 10, after 5 warm-up queries, on a warm connection; a query's time is "
                 f"its fastest of {s.passes} pass{'es' if s.passes != 1 else ''}, the methods taking turns on "
                 "each query (so the machine's other jobs slow them alike). Indexes of this size are the "
                 "corpus replicated under path prefixes; "
                 "tantivy and bm25s index the same sections (path, headings, body). setup: time (and disk "
                 "size) to load what a method needs before the first query."
                 + ("\n\nLeft out: " + "; ".join(left) + "." if left else "") + "\n\n" + "\n".join(extra))
    if len(scale) > 1:
        report.add("Growth", growth_table(scale))
    inc = incremental.measure(Path(first["path"]), work, runs=s.runs)
    report.add("Incremental", incremental.table(inc))
    report.target("incremental rebuild (1% changed) vs full", ">= 5x faster", inc.speedup,
                  TARGETS["incremental_speedup"], "x", higher_is_better=True)
    report.add("Targets (issue #15)", md_table(["what", "target", "measured", "verdict"], report.targets))
    return report


@click.command()
@click.argument("corpora", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the report here (default: docs/benchmarks.md; none with --quick).")
@click.option("--quick", is_flag=True, help="A smoke test: one run, small sizes, a few queries.")
@click.option("--runs", type=click.IntRange(1, 20), help="Runs to take the median of (default 3).")
@click.option("--queries", "n_queries", type=click.IntRange(5, 10_000), help="Queries per method (default 200).")
@click.option("--passes", type=click.IntRange(1, 20),
              help="Passes over the queries; each query's time is its fastest pass (default 3).")
@click.option("--sizes", help="Sections in the query-benchmark indexes, comma-separated (default 10000,100000).")
@click.option("--large", is_flag=True,
              help="Also measure an index of ~1M sections (about an hour on a 2-core machine).")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path),
              help="Work in this folder and keep it (corpora and indexes); default: a temp folder, removed.")
def main(corpora: tuple[Path, ...], out: Path | None, quick: bool, runs: int | None, n_queries: int | None,
         passes: int | None, sizes: str | None, large: bool, keep: Path | None) -> None:
    """Measure build and query speed, size and memory; print a markdown report and write it to --out.

    CORPORA are folders of markdown (default: the bundled sample/docs replicated to 20 MB).

    \b
    Example:
      python -m bench speed ../shared/corpora/tldr-common --out docs/benchmarks.md
    """
    s = QUICK if quick else Settings()
    s.large = large
    if runs:
        s.runs = runs
    if n_queries:
        s.queries = n_queries
    if passes:
        s.passes = passes
    if sizes:
        try:
            s.sizes = tuple(int(x) for x in sizes.split(","))
        except ValueError:
            raise click.UsageError(f"--sizes {sizes!r}: give whole numbers separated by commas") from None
    if out is None and not quick:
        out = Path("docs/benchmarks.md")
    argv = sys.argv[1:]
    command = portable_command("python -m bench speed", argv[1:] if argv[:1] == ["speed"] else argv)
    with contextlib.ExitStack() as stack:
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
            work = keep
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mdfts-bench-")))
        report = run([c.resolve() for c in corpora], s, work, command)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("# Benchmarks\n\nWritten by `make bench` (`python -m bench speed`); see docs/benchmarking.md "
                       "for what each figure means.\n\n" + "\n".join(report.sections), encoding="utf-8")
        log(f"wrote {out}")


if __name__ == "__main__":
    main()
