"""build_index(): discover → parse → sections → tokens → write, nothing else."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import sqlite3
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from mdfts.artifact import APPLICATION_ID, check_source_url
from mdfts.discover import DEFAULT_INCLUDE, FileSet, SourceFile, SourceText, discover, read_source
from mdfts.errors import MdftsError, SourceError, display
from mdfts.index import open_index
from mdfts.provenance import Provenance, artifact_version as _artifact_version, read_provenance
from mdfts.queries import package_queries
from mdfts.sections import Section, split_sections, stream_sections
from mdfts.workers import default_workers, ordered_map
from mdfts.write import DocumentRows, IndexWriter, WriteStats, add_time, prepare_rows

if TYPE_CHECKING:
    from mdfts.github import GitHubOptions

ON_ERROR = ("fail", "skip")


@dataclass(slots=True)
class BuildResult:
    out: Path
    stats: WriteStats
    files: int
    skipped: list[str] = field(default_factory=list)
    reused: int = 0  # documents copied from the previous index


def build_index(
    roots: Sequence[Path | str | FileSet],
    out: Path,
    *,
    include: Sequence[str] = DEFAULT_INCLUDE,
    exclude: Sequence[str] = (),
    on_error: str = "fail",
    source_name: str | None = None,
    source_url: str | None = None,
    artifact_version: str | None = None,
    warn: Callable[[str], None] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    previous: Path | None = None,
    timings: dict[str, float] | None = None,
    allow_empty: bool = False,
    workers: int | None = None,
    github: GitHubOptions | None = None,
    force: bool = False,
) -> BuildResult:
    """Build the index file `out` from the markdown under `roots`; the old file survives a failure.

    :param on_error: "fail" stops at the first unreadable file; "skip" warns and leaves it out.
    :param source_url: URL template of a section's source lines, stored as mdfts_meta.source_url
        (fields {path}, {start_line}, {end_line}, {anchor}, {commit}; see docs/datasette.md).
    :param artifact_version: stored as mdfts_meta artifact_version; None derives it from git
        (the tag at HEAD, else `YYYYMMDD+<commit>`), "" stores none.
    :param progress: called with (files done, files in all, path) after each file.
    :param previous: an older index (may be `out` itself) whose unchanged documents are copied
        instead of parsed; the result is byte-identical to a full build. One this mdfts cannot
        reuse (another schema or mdfts version, not an index) is ignored with a warning.
    :param allow_empty: build an index of no documents when no file matches, instead of failing.
    :param timings: when given, CPU seconds per stage are added to it (discover, read, sections, write,
        then IndexWriter.finish's steps); `make bench` reads them. Off, it costs nothing.
    :param workers: processes that read and parse files while this one writes rows; None picks
        one per core (see mdfts.workers.default_workers), 1 runs everything here. The index is
        byte-identical whatever the number. A build that reuses `previous` runs in one process.
    :param roots: folders, files, `github:OWNER/REPO[@REF][:PATH]` strings (fetched first, see
        docs/github.md; `github` says how) or FileSets.
    :param force: replace `out` even when it is not an mdfts index, unless it is in a source folder.
    """
    if on_error not in ON_ERROR:
        raise MdftsError(f"--on-error must be one of {', '.join(ON_ERROR)}")
    out = Path(out)
    if source_url:
        check_source_url(source_url)
    _check_output(out, [r for r in roots if isinstance(r, (Path, str)) and not str(r).startswith("github:")], force)
    started = add_time(timings, "", 0.0)
    sources = _fetched(roots, include, exclude, github, warn)
    files = discover(sources, include, exclude, skip=[out], warn=warn, on_error=on_error)
    add_time(timings, "discover", started)
    if not files and not allow_empty:
        named = [r.name if isinstance(r, FileSet) else r for r in roots]
        raise MdftsError(_nothing_matched(named, include, exclude))
    meta = {
        "mdfts_version": _version(),
        "source": source_name or ", ".join(sorted({
            r.name if isinstance(r, FileSet) else r.resolve().name or "/" for r in sources})),
        "files": str(len(files)),
        **_fileset_meta(sources),
    }
    if source_url:
        meta["source_url"] = source_url
    first = sources[0]
    provenance = (read_provenance(first, files, warn) if isinstance(first, Path)
                  else Provenance(first.commit, first.commit_time, None, None, False) if first.commit else None)
    version = _artifact_version(artifact_version, provenance)
    meta.update(provenance.meta() if provenance else {})
    meta.update({"artifact_version": version} if version else {})
    last_commits = provenance.last_commits if provenance else {}
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch:
        if not epoch.isdigit():
            raise MdftsError(f"SOURCE_DATE_EPOCH={epoch!r} is not a whole number of seconds")
        meta["built_at"] = epoch
    skipped: list[str] = []
    reusable = _reusable(previous, meta["mdfts_version"], warn) if previous is not None else None
    try:
        if workers is None:
            workers = 1 if reusable is not None else default_workers(len(files))
        return _write(files, out, meta, last_commits, on_error, skipped, warn, progress, reusable, timings,
                      workers)
    except sqlite3.Error as err:
        raise MdftsError(f"{out}: cannot write the index: {err}") from None
    except OSError as err:
        raise MdftsError(f"{out}: cannot write the index: {err.strerror or err}") from None


def _is_index(path: Path) -> bool:
    """Whether `path` starts like an mdfts index (SQLite's header, our application_id)."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\0") and int.from_bytes(header[68:72], "big") == APPLICATION_ID


def _check_output(out: Path, roots: Sequence[Path | str], force: bool) -> None:
    """Refuse to replace a file that is not an mdfts index (`-o docs/README.md` replaced the doc);
    `force` overrides that, but never for a file inside a source folder."""
    if not out.is_file() or _is_index(out):
        return  # new, an index, or a folder (the writer's own error)
    real = out.resolve()
    for root in roots:
        folder = Path(root).resolve()
        if real == folder or (folder.is_dir() and real.is_relative_to(folder)):
            raise MdftsError(f"{display(str(out))}: is in the source folder {display(str(root))} and not an mdfts "
                             "index; refusing to replace it (--force does not apply inside a source folder)")
    if not force:
        raise MdftsError(f"{display(str(out))}: exists and is not an mdfts index; refusing to replace it "
                         "(--force replaces it)")


def _nothing_matched(roots: Sequence[Path | str], include: Sequence[str], exclude: Sequence[str]) -> str:
    where = ", ".join(display(str(r)) for r in roots)
    but = f", less --exclude {' '.join(exclude)}" if exclude else ""
    return (f"{where}: no file matches --include {' '.join(include)}{but}; nothing to index "
            "(--allow-empty builds an empty index)")


def _fetched(roots: Sequence[Path | str | FileSet], include: Sequence[str], exclude: Sequence[str],
             github: GitHubOptions | None, warn: Callable[[str], None] | None) -> list[Path | FileSet]:
    """The roots, each `github:` string fetched into a FileSet (the network only when there is one)."""
    if not any(isinstance(r, str) and r.startswith("github:") for r in roots):
        return [Path(r) if isinstance(r, str) else r for r in roots]
    from mdfts.github import fetch_sources

    return fetch_sources(roots, include, exclude, github, warn)


def _fileset_meta(sources: Sequence[Path | FileSet]) -> dict[str, str]:
    """A lone FileSet's provenance rows (source_ref, source_commit, ..., default source_url); with
    several sources, each FileSet's rows and path prefix as one JSON row, `sources`."""
    sets = [s for s in sources if isinstance(s, FileSet)]
    if len(sources) == 1 and sets:
        return dict(sets[0].meta)
    rows = [{"source": s.name, "prefix": s.prefix, **{k: v for k, v in s.meta.items() if k != "source_url"}}
            for s in sets]
    return {"sources": json.dumps(rows, ensure_ascii=False, sort_keys=True)} if rows else {}


def _reusable(previous: Path, version: str, warn: Callable[[str], None] | None) -> Path | None:
    """`previous` when its rows are what this mdfts would write, else None (after a warning)."""
    why = None
    built_by: dict[str, str] = {}
    try:
        with open_index(previous) as ix:
            built_by = ix.meta
    except MdftsError as err:
        why = str(err)
    else:
        # Another mdfts may parse the same bytes into other rows: only its own output is reusable.
        if why is None and built_by.get("mdfts_version") != version:
            why = f"{previous}: built by mdfts {built_by.get('mdfts_version', '?')}, this is {version}"
    if why is None:
        return previous
    if warn:
        warn(f"{why}; not reusing it, building everything")
    return None


# A file a worker could not read or parse: (path, line, what), to raise or skip in the parent
# (a SourceError does not survive pickling: its __init__ takes three arguments).
_Failed = tuple[str, "int | None", str]
# A file's rows (or why there are none), and the CPU seconds spent reading, splitting and
# preparing rows: a worker's clock, which build_index(timings=...) adds up.
_Parsed = tuple["DocumentRows | _Failed | str", float, float, float]


def _is_big(f: SourceFile) -> bool:
    if f.data is not None:
        return len(f.data) > STREAM_FROM
    try:
        return f.abspath.stat().st_size > STREAM_FROM
    except OSError:
        return False  # read_source says why


# Files bigger than this are split in the main process and their sections written as they are
# read (stream_sections), rather than whole in a worker: a worker's rows are pickled and up to
# 4 * workers * chunksize files' rows wait in memory, so the files sent there must be small for
# peak memory to stay O(largest file). Markdown docs are mostly far smaller.
STREAM_FROM = 64 * 1024
_STREAM = "stream"  # _read_and_split's answer for a file the parent must stream itself


def _read_and_split(f: SourceFile, timed: bool = False) -> _Parsed:
    """One file read, split into sections and turned into rows (in a worker process, or not);
    with `timed`, the CPU seconds of each step (reading the clock is a system call: a build
    without timings reads none)."""
    clock = time.process_time if timed else _no_clock
    started = clock()
    try:
        if _is_big(f):
            return _STREAM, 0.0, 0.0, 0.0
        src = read_source(f)
        read = clock()
        doc = split_sections(src.path, src.text, src.sha256, src.size)
    except SourceError as err:
        return (err.path, err.line, err.what), 0.0, 0.0, 0.0
    split = clock()
    rows = prepare_rows(doc)
    return rows, read - started, split - read, clock() - split


def _no_clock() -> float:
    return 0.0


def _write(
    files: Sequence[SourceFile],
    out: Path,
    meta: dict[str, str],
    last_commits: dict[str, str],
    on_error: str,
    skipped: list[str],
    warn: Callable[[str], None] | None,
    progress: Callable[[int, int, str], None] | None,
    previous: Path | None,
    timings: dict[str, float] | None,
    workers: int,
) -> BuildResult:
    with IndexWriter(out, timings=timings) as writer:
        if previous is not None:
            writer.attach_previous(previous)
            parsed: Generator[_Parsed | None, None, None] = (_reuse_or_split(writer, f, timings) for f in files)
        else:
            parsed = ordered_map(functools.partial(_read_and_split, timed=timings is not None), files, workers)
        # Closed on the way out, error or not: that stops the workers at once.
        with contextlib.closing(parsed):
            # Not zip(files, parsed): zip stops at the end of `files` and leaves `parsed` open.
            for n, item in enumerate(parsed, 1):
                path = files[n - 1].path
                error = None
                if item is not None and item[0] == _STREAM:
                    error = _stream_file(writer, files[n - 1], None, timings)
                elif item is not None and not _add(writer, item, timings):
                    error = SourceError(*cast(_Failed, item[0]))
                if error is not None:
                    if on_error == "fail":
                        raise error
                    skipped.append(path)
                    if warn:
                        warn(f"{error}; skipped")
                    continue
                if progress:
                    progress(n, len(files), path)
        meta["skipped"] = str(len(skipped))
        writer.set_last_commits(last_commits)
        stats = writer.finish(meta, [q.row() for q in package_queries()])
    return BuildResult(out, stats, len(files), skipped, writer.reused)


def _add(writer: IndexWriter, item: _Parsed, timings: dict[str, float] | None) -> bool:
    """Write a parsed file's rows; False when the file failed instead."""
    rows, read_s, split_s, prepare_s = item
    if timings is not None:
        for stage, seconds in (("read", read_s), ("sections", split_s), ("write", prepare_s)):
            timings[stage] = timings.get(stage, 0.0) + seconds
    if isinstance(rows, str) or len(rows) == 3:  # _Failed (a _STREAM file never gets here)
        return False
    started = add_time(timings, "", 0.0)
    writer.add_rows(rows)
    add_time(timings, "write", started)
    return True


def _reuse_or_split(writer: IndexWriter, f: SourceFile, timings: dict[str, float] | None) -> _Parsed | None:
    """None when the previous index holds the file unchanged (its rows are copied), else its rows."""
    started = add_time(timings, "", 0.0)
    try:
        src = read_source(f)
    except SourceError as err:
        return (err.path, err.line, err.what), 0.0, 0.0, 0.0
    started = add_time(timings, "read", started)
    if writer.reuse(src.path, src.sha256):
        add_time(timings, "reuse", started)
        return None
    if src.size > STREAM_FROM:
        error = _stream_file(writer, f, src, timings)
        return None if error is None else ((error.path, error.line, error.what), 0.0, 0.0, 0.0)
    try:
        doc = split_sections(src.path, src.text, src.sha256, src.size)
    except SourceError as err:
        return (err.path, err.line, err.what), 0.0, 0.0, 0.0
    started = add_time(timings, "sections", started)
    rows = prepare_rows(doc)
    add_time(timings, "write", started)
    return rows, 0.0, 0.0, 0.0


def _stream_file(writer: IndexWriter, f: SourceFile, src: SourceText | None,
                 timings: dict[str, float] | None) -> SourceError | None:
    """Read (unless `src` is given), split and write one big file, its sections as they are read.
    Memory is its text and one batch of rows; a file that fails leaves no row."""
    started = add_time(timings, "", 0.0)
    try:
        if src is None:
            src = read_source(f)
            started = add_time(timings, "read", started)
        sink = writer.start_document()
        doc = stream_sections(src.path, src.text, _timed(sink, timings), src.sha256, src.size, plain_text=False)
        started = add_time(timings, "sections", started)
    except SourceError as err:
        writer.abandon_document()
        return err
    writer.end_document(doc)
    add_time(timings, "write", started)
    return None


def _timed(sink: Callable[[Section, str], None], timings: dict[str, float] | None) -> Callable[[Section, str], None]:
    """`sink`, its CPU time counted as "write" (and taken out of "sections") when timing."""
    if timings is None:
        return sink

    def timed(section: Section, title: str) -> None:
        started = add_time(timings, "", 0.0)
        sink(section, title)
        spent = add_time(timings, "write", started) - started
        timings["sections"] = timings.get("sections", 0.0) - spent

    return timed


def _version() -> str:
    from mdfts import __version__

    return __version__
