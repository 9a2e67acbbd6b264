"""build_index(): discover → read → parse → split → extract tokens → write, each stage timed.

The stages are discover(), read_source(), stream_blocks(), sections.Splitter, strongest_sources()
and IndexWriter; this module runs them in order, in worker processes or here, on one clock.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import sqlite3
import stat
import sys
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from mdfts.artifact import SCHEMA_VERSION, check_source_url, file_is_index
from mdfts.discover import (
    DEFAULT_INCLUDE,
    FileSet,
    SourceFile,
    SourceText,
    discover,
    include_root,
    no_file_matches,
    read_source,
)
from mdfts.errors import MdftsError, SourceError, display
from mdfts.includes import Includes, Tree, has_includes, may_include
from mdfts.index import open_index
from mdfts.parse import stream_blocks
from mdfts.provenance import Provenance, artifact_version as _artifact_version, read_provenance
from mdfts.queries import package_queries
from mdfts.sections import Document, Section, Splitter, normalize_text
from mdfts.tokens import strongest_sources
from mdfts.workers import default_workers, ordered_map
from mdfts.write import DocumentRows, IndexWriter, RowsMismatch, WriteStats, prepare_rows

if TYPE_CHECKING:
    from mdfts.github import GitHubOptions

ON_ERROR = ("fail", "skip")
# The stages, in the order a file goes through them. provenance (git) and reuse (copying an
# unchanged file from --previous) run only when there is something for them to do; transfer
# (this process receiving the rows of files parsed in worker processes) only with workers.
STAGES = ("discover", "provenance", "read", "parse", "split", "tokens", "reuse", "transfer", "write")

P = ParamSpec("P")
R = TypeVar("R")


class StageClock:
    """CPU seconds per stage, read at each switch from one stage to the next (time.process_time:
    it says where the work went, not who else was running). One clock read a switch."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.current = ""
        self.last = time.process_time()

    def switch(self, stage: str) -> str:
        """Charge the time since the last switch to the running stage, start `stage` ("": none);
        returns the stage that was running."""
        now = time.process_time()
        if self.current:
            self.seconds[self.current] = self.seconds.get(self.current, 0.0) + now - self.last
        previous, self.current, self.last = self.current, stage, now
        return previous

    def add(self, seconds: dict[str, float]) -> None:
        """Add what another clock measured (a worker process's) to this one's."""
        for stage, spent in seconds.items():
            self.seconds[stage] = self.seconds.get(stage, 0.0) + spent

    def within(self, stage: str, fn: Callable[P, R]) -> Callable[P, R]:
        """`fn`, its time charged to `stage`, then back to the stage that called it."""

        def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            previous = self.switch(stage)
            try:
                return fn(*args, **kwargs)
            finally:
                self.switch(previous)

        return timed


@dataclass(frozen=True, slots=True)
class BuildStats:
    """CPU seconds of each stage of one build, worker processes included; `write` includes
    IndexWriter.finish's steps (`write_steps`)."""

    seconds: dict[str, float]      # by stage, every one of STAGES (0 when it did not run)
    write_steps: dict[str, float]  # fts_rebuild, derive, meta, fts_optimize, vacuum, replace, ...

    def __getitem__(self, stage: str) -> float:
        return self.seconds[stage]

    @property
    def total(self) -> float:
        return sum(self.seconds.values())

    def to_dict(self) -> dict[str, object]:
        return {**{k: round(v, 4) for k, v in self.seconds.items()},
                "write_steps": {k: round(v, 4) for k, v in self.write_steps.items()}}


@dataclass(slots=True)
class BuildResult:
    out: Path
    stats: WriteStats
    files: int
    skipped: list[str] = field(default_factory=list)
    reused: int = 0  # documents copied from the previous index
    stages: BuildStats = field(default_factory=lambda: BuildStats(dict.fromkeys(STAGES, 0.0), {}))
    previous: Path | None = None  # the older index asked to reuse (used or not: `reused` says)
    seconds: float = 0.0  # wall-clock time of the build

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `mdfts build --json` prints (cpu_seconds: per stage)."""
        s = self.stats
        return {
            "output": str(self.out), "documents": s.documents, "sections": s.sections, "tokens": s.tokens,
            "bytes": s.bytes, "seconds": round(self.seconds, 3), "files": self.files, "skipped": list(self.skipped),
            "reused": self.reused, "previous": str(self.previous) if self.previous is not None else None,
            "cpu_seconds": self.stages.to_dict(),
        }


def build_index(
    roots: Sequence[Path | str | FileSet] | Path | str | FileSet,
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
    :param workers: processes that read and parse files while this one writes rows; None picks
        one per core (see mdfts.workers.default_workers), 1 runs everything here. The index is
        byte-identical whatever the number. A build that reuses `previous` parses in this process
        and checks the reused rows in one worker beside it (mdfts.workers.Aside, same rule).
    :param roots: folders, files, `github:OWNER/REPO[@REF][:PATH]` strings (fetched first, see
        docs/github.md; `github` says how) or FileSets; or one of them alone.
    :param force: replace `out` even when it is not an mdfts index, unless it is in a source folder.

    The result's `stages` holds the CPU seconds of each stage (`make bench` reports them).
    """
    started = time.perf_counter()
    if on_error not in ON_ERROR:
        raise MdftsError(f"--on-error must be one of {', '.join(ON_ERROR)}")
    if isinstance(roots, (Path, str, FileSet)):  # a str is also a sequence: of one-letter paths
        roots = [roots]
    out = Path(out)
    if source_url:
        check_source_url(source_url)
    _check_output(out, [r for r in roots if isinstance(r, (Path, str)) and not str(r).startswith("github:")], force)
    clock = StageClock()
    clock.switch("discover")  # fetching github: sources included
    sources = _fetched(roots, include, exclude, github, warn)
    files = discover(sources, include, exclude, skip=[out], warn=warn, on_error=on_error)
    clock.switch("provenance")
    named = [r.name if isinstance(r, FileSet) else r for r in roots]
    if not files and not allow_empty:
        raise MdftsError(_nothing_matched(named, include, exclude))
    # --on-error skip that skips every file must not replace the index with one of nothing
    all_skipped = None if allow_empty else (f"{', '.join(display(str(r)) for r in named)}: every file was "
                                            f"skipped ({len(files)}); nothing to index (--allow-empty builds an "
                                            "empty index)")
    meta = {
        "mdfts_version": _version(),
        "build_fingerprint": build_fingerprint(),
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
    if previous is not None:
        clock.switch("reuse")
    reusable = _reusable(previous, meta["mdfts_version"], warn) if previous is not None else None
    try:
        if workers is None:
            workers = 1 if reusable is not None else default_workers(len(files))
        try:
            result = _write(files, out, meta, last_commits, on_error, skipped, warn, progress, reusable, clock,
                            workers, all_skipped)
        except RowsMismatch as err:  # nothing of that attempt is left: the writer cleaned up
            if warn:
                warn(f"{previous}: {err}; not reusing it, building everything")
            skipped.clear()
            result = _write(files, out, meta, last_commits, on_error, skipped, warn, progress, None, clock,
                            default_workers(len(files)), all_skipped)
    except sqlite3.Error as err:
        raise MdftsError(f"{out}: cannot write the index: {err}") from None
    except OSError as err:
        raise MdftsError(f"{out}: cannot write the index: {err.strerror or err}") from None
    result.previous = previous
    result.seconds = time.perf_counter() - started
    return result


def _check_output(out: Path, roots: Sequence[Path | str], force: bool) -> None:
    """Refuse to replace a file that is not an mdfts index (`-o docs/README.md` replaced the doc);
    `force` overrides that, but never for a file inside a source folder, nor for what is not a
    regular file (`-o /dev/null` replaced the device)."""
    try:
        mode = out.stat().st_mode  # through a symlink: /dev/stdout is one, to a pipe
    except OSError:
        return  # new, or a path the writer reports on
    if stat.S_ISDIR(mode):
        return  # the writer's own error
    if not stat.S_ISREG(mode):
        raise MdftsError(f"{display(str(out))}: exists and is not a regular file; refusing to replace it")
    if file_is_index(out):
        return
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
    return f"{no_file_matches(roots, include, exclude)}; nothing to index (--allow-empty builds an empty index)"


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


# The modules and files whose code decides what rows a file becomes: a change to any of them
# (a parser fix that kept the version string) makes an older index's rows another parser's.
# build.py is one: _document() runs parse, split and tokens on a file's text.
_ROW_SOURCES = ("build.py", "discover.py", "parse.py", "sections.py", "tokens.py", "words.py", "write.py",
                "schema.sql")


def _runtime() -> str:
    """The Python a build's rows depend on: its str methods and regular expressions read its
    Unicode tables (a new minor version updates them), and it brings tomllib."""
    import unicodedata

    return f"python {sys.version_info[0]}.{sys.version_info[1]} unicode {unicodedata.unidata_version}"


@functools.lru_cache(maxsize=1)
def build_fingerprint() -> str:
    """What an index's rows depend on, hashed: schema, mdfts, Python's and the parsers' versions and
    the source of the modules that turn files into rows. Stored as mdfts_meta.build_fingerprint;
    `--previous` reuses rows only from an index with the same one."""
    import hashlib
    from importlib import metadata
    from importlib.resources import files

    h = hashlib.sha256(f"schema {SCHEMA_VERSION}\nmdfts {_version()}\n{_runtime()}\n".encode())
    for dist in ("markdown-it-py", "mdit-py-plugins", "PyYAML", "tomli"):
        try:
            h.update(f"{dist} {metadata.version(dist)}\n".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{dist} ?\n".encode())
    package = files("mdfts")
    for name in _ROW_SOURCES:
        h.update(name.encode() + b"\0" + package.joinpath(name).read_bytes())
    return h.hexdigest()[:32]


def _reusable(previous: Path, version: str, warn: Callable[[str], None] | None) -> Path | None:
    """`previous` when its rows are what this mdfts would write, else None (after a warning)."""
    why = None
    built_by: dict[str, str] = {}
    try:
        with open_index(previous) as ix:
            built_by = ix.meta
    except MdftsError as err:
        why = str(err)
    except sqlite3.DatabaseError as err:  # a header that opens, then a bad page or a short file
        why = f"{previous}: cannot read it ({err})"
    else:
        # Another parser may split the same bytes into other rows: only the same one's are reusable.
        if built_by.get("mdfts_version") != version:
            why = f"{previous}: built by mdfts {built_by.get('mdfts_version', '?')}, this is {version}"
        elif built_by.get("build_fingerprint") != build_fingerprint():
            why = (f"{previous}: built by another parser (build fingerprint "
                   f"{built_by.get('build_fingerprint', 'none')}, this is {build_fingerprint()})")
    if why is None:
        return previous
    if warn:
        warn(f"{why}; not reusing it, building everything")
    return None


# A file a worker could not read or parse: (path, line, what), to raise or skip in the parent
# (a SourceError does not survive pickling: its __init__ takes three arguments).
_Failed = tuple[str, "int | None", str]
# A file's rows (or why there are none, or _STREAM), and the CPU seconds of its stages where it
# was parsed: a worker's clock (empty when this process's clock counted them).
_Parsed = tuple["DocumentRows | _Failed | str", dict[str, float]]


def _is_big(f: SourceFile) -> bool:
    """Whether this process reads the file itself, its sections written as they are split: a big
    one, and one in memory whose include directives name other files of its source (a worker
    has only the file: see _sendable)."""
    if f.data is not None:
        return len(f.data) > STREAM_FROM or may_include(f.data)
    try:
        return os.stat(f.filename).st_size > STREAM_FROM
    except OSError:
        return False  # read_source says why


# Files bigger than this are split in the main process and their sections written as they are
# read (stream_sections), rather than whole in a worker: a worker's rows are pickled and up to
# 4 * workers * chunksize files' rows wait in memory, so the files sent there must be small for
# peak memory to stay O(largest file). Markdown docs are mostly far smaller.
STREAM_FROM = 64 * 1024
_STREAM = "stream"  # _read_and_split's answer for a file the parent must stream itself


def _document(src: SourceText, clock: StageClock,
              sink: Callable[[Section, str], None] | None = None, root: Path | Tree | None = None) -> Document:
    """One file's text through parse → split → extract tokens. Each section goes to `sink` (the
    write stage) as it closes; without a sink they are the Document's `sections`. A section whose
    include directives name files below `root` carries their text (mdfts.includes)."""
    clock.switch("split")
    text = normalize_text(src.text)
    sections: list[Section] = []
    to = clock.within("write", sink) if sink is not None else (lambda s, _title: sections.append(s))
    if root is not None and has_includes(text):
        to = _with_included(to, Includes(root, src.path, src.size))
    # The splitter makes a section's exact tokens as it closes it (and every few dozen pieces of
    # a long one), so they are never all alive at once: the token stage runs inside split.
    # No plain text: the rows hold the body, and the index derives the rest from it.
    splitter = Splitter(src.path, text, to, plain_text=False, extract=clock.within("tokens", strongest_sources))
    clock.switch("parse")
    # Parsing hands its top-level blocks to the splitter a few at a time: memory is a few blocks'
    # markdown-it tokens, not the document's.
    stream_blocks(text, clock.within("split", splitter.feed))
    clock.switch("split")
    doc = splitter.finish(src.sha256, src.size)
    return doc if sink is not None else dataclasses.replace(doc, sections=tuple(sections))


def _with_included(to: Callable[[Section, str], None], includes: Includes) -> Callable[[Section, str], None]:
    def add(s: Section, title: str) -> None:
        if has_includes(s.body):
            read = includes.text(s.body)
            if read is not None:
                s = dataclasses.replace(s, included=read[0], included_files=read[1])
        to(s, title)
    return add


def _sendable(f: SourceFile) -> SourceFile:
    """`f` to hand a worker process: without its source's other files (pickled, they would go
    along with every file that names one; _is_big keeps such a file in this process)."""
    return f if f.tree is None else dataclasses.replace(f, tree=None)


def _read_and_split(f: SourceFile) -> _Parsed:
    """One file read, parsed, split, its tokens extracted and its rows made, on a clock of its own
    (in a worker process, or not)."""
    if _is_big(f):
        return _STREAM, {}
    clock = StageClock()
    try:
        clock.switch("read")
        src = read_source(f)
        doc = _document(src, clock, root=include_root(f))
    except SourceError as err:
        clock.switch("")
        return (err.path, err.line, err.what), clock.seconds
    clock.switch("write")  # the rows are the write stage's, made where the file was parsed
    rows = prepare_rows(doc)
    clock.switch("")
    return rows, clock.seconds


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
    clock: StageClock,
    workers: int,
    all_skipped: str | None,
) -> BuildResult:
    """Write the index; `all_skipped` is the error when every file was skipped (None: allowed)."""
    write_steps: dict[str, float] = {}
    clock.switch("write")
    with IndexWriter(out, timings=write_steps, files=len(files)) as writer:
        if previous is not None:
            writer.attach_previous(previous)
            parsed: Generator[_Parsed | None, None, None] = (_reuse_or_split(writer, f, clock) for f in files)
        else:
            parsed = ordered_map(_read_and_split, [_sendable(f) for f in files], workers)
        # While the next file is made, this clock stops where that happens here (the file's own
        # clock, or _reuse_or_split's switches, count it) and reads transfer where workers make it.
        waiting = "transfer" if previous is None and workers > 1 else ""
        # Closed on the way out, error or not: that stops the workers at once.
        with contextlib.closing(parsed):
            clock.switch(waiting)
            # Not zip(files, parsed): zip stops at the end of `files` and leaves `parsed` open.
            for n, item in enumerate(parsed, 1):
                clock.switch("write")
                path = files[n - 1].path
                error = None
                if item is not None and item[0] == _STREAM:
                    error = _stream_file(writer, files[n - 1], None, clock)
                elif item is not None and not _add(writer, item, clock):
                    error = SourceError(*cast(_Failed, item[0]))
                if error is not None:
                    if on_error == "fail":
                        raise error
                    skipped.append(path)
                    if warn:
                        warn(f"{error}; skipped")
                elif progress:
                    progress(n, len(files), path)
                clock.switch(waiting)
        clock.switch("write")
        if all_skipped is not None and files and len(skipped) == len(files):
            raise MdftsError(all_skipped)
        meta["skipped"] = str(len(skipped))
        writer.set_last_commits(last_commits)
        stats = writer.finish(meta, [q.row() for q in package_queries()])
    clock.switch("")
    stages = BuildStats({s: clock.seconds.get(s, 0.0) for s in STAGES}, write_steps)
    return BuildResult(out, stats, len(files), skipped, writer.reused, stages)


def _add(writer: IndexWriter, item: _Parsed, clock: StageClock) -> bool:
    """Write a parsed file's rows; False when the file failed instead."""
    rows, seconds = item
    clock.add(seconds)
    if isinstance(rows, str) or len(rows) == 3:  # _Failed (a _STREAM file never gets here)
        return False
    writer.add_rows(rows)
    return True


def _reuse_or_split(writer: IndexWriter, f: SourceFile, clock: StageClock) -> _Parsed | None:
    """None when the previous index holds the file unchanged (its rows are copied) or it was
    streamed into the index, else its rows. Runs in this process, on its clock."""
    try:
        clock.switch("read")
        src = read_source(f)
    except SourceError as err:
        return (err.path, err.line, err.what), {}
    clock.switch("reuse")
    # (a file with include directives is read again: a file it names may have changed)
    if not has_includes(src.text) and writer.reuse(src.path, src.sha256):
        return None
    if src.size > STREAM_FROM:
        error = _stream_file(writer, f, src, clock)
        return None if error is None else ((error.path, error.line, error.what), {})
    try:
        doc = _document(src, clock, root=include_root(f))
    except SourceError as err:
        return (err.path, err.line, err.what), {}
    clock.switch("write")
    return prepare_rows(doc), {}


def _stream_file(writer: IndexWriter, f: SourceFile, src: SourceText | None, clock: StageClock) -> SourceError | None:
    """Read (unless `src` is given), split and write one big file, its sections as they are read.
    Memory is its text and one batch of rows; a file that fails leaves no row."""
    try:
        if src is None:
            clock.switch("read")
            src = read_source(f)
        clock.switch("write")
        sink = writer.start_document()
        doc = _document(src, clock, sink, include_root(f))
    except SourceError as err:
        clock.switch("write")
        writer.abandon_document()
        return err
    clock.switch("write")
    writer.end_document(doc)
    return None


def _version() -> str:
    from mdfts import __version__

    return __version__
