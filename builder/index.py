"""The one read object: `open_index(path)` → an `Index` that owns a read-only connection."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

from mdfts.artifact import (
    APPLICATION_ID,
    SCHEMA_VERSION,
    StoredQuery,
    check_index,
    read_error,
    read_meta,
    read_stored_queries,
)
from mdfts.errors import IndexVersionError, MdftsError, display
from mdfts.queries import pick_query, run_query

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator
    from types import TracebackType
    from typing import Any, overload

    from mdfts.prompt import Context, Format
    from mdfts.records import DocumentEntry, Hit, Outline, OutlineEntry, SectionPage

# Read-only and immutable, an index may be read from any thread (a server answers from a pool of
# them) where the SQLite library serializes the calls on one connection, as its default build does
# (threadsafety 3; Python 3.10 reports 1 whatever the build).
_SHARED = sqlite3.threadsafety == 3 or sys.version_info < (3, 11)


def connect(path: Path | str, check: bool = True) -> sqlite3.Connection:
    """A read-only, immutable connection (no -journal, -wal or -shm file is ever created) to an
    mdfts index this mdfts reads; with `check` False, to any SQLite file. The caller closes it."""
    path = Path(path)
    name = display(str(path))  # a line break in the file name would split the one-line message
    if not path.is_file():  # a device or a pipe exists, but is no index
        why = "not an index file (not a regular file)" if path.exists() else "no such index file"
        raise MdftsError(f"{name}: {why}")
    uri = path.resolve().as_uri() + "?mode=ro&immutable=1"
    try:
        db = sqlite3.connect(uri, uri=True, check_same_thread=not _SHARED)
    except sqlite3.Error as err:
        # Opening reads nothing yet (a file that is no database fails at the first read below):
        # SQLite's "unable to open database file" hides the system's reason, which is the one a
        # user can act on (Permission denied, Too many open files).
        raise MdftsError(f"{name}: cannot open the index file ({_why_unopenable(path) or err})") from None
    try:
        if check:
            check_index(db, name)
        else:
            db.execute("pragma application_id").fetchone()
    except sqlite3.DatabaseError as err:
        db.close()
        raise read_error(name, err, "not an SQLite database") from None
    except IndexVersionError:
        db.close()
        raise
    return db


def _why_unopenable(path: Path) -> str | None:
    """The system's reason a file cannot be opened for reading, or None when it can."""
    try:
        with open(path, "rb"):
            return None
    except OSError as err:
        return err.strerror


class Index:
    """A built index, open read-only: its meta, its stored queries, and the lookups over them.

    Use it as a context manager (or call close()); it owns its connection.
    """

    def __init__(self, path: Path | str) -> None:
        self._open(Path(path), connect(path), owns=True)

    @classmethod
    def from_connection(cls, conn: sqlite3.Connection, path: Path | str | None = None) -> Index:
        """An Index over a connection someone else opened and closes (Datasette's, inside
        `db.execute_fn`): checked like open_index(), but close() leaves the connection open.

        :param path: the index file, for `name` and messages; default: the connection's main
            database file.
        """
        if path is None:
            path = next((row[2] for row in conn.execute("pragma database_list") if row[1] == "main"), "")
        ix = cls.__new__(cls)
        label = Path(path or ":memory:")
        check_index(conn, display(str(label)))
        ix._open(label, conn, owns=False)
        return ix

    def _open(self, path: Path, conn: sqlite3.Connection, owns: bool) -> None:
        self.path = path
        self.conn = conn
        self._owns = owns
        try:
            self.meta: dict[str, str] = read_meta(self.conn)
        except sqlite3.DatabaseError as err:
            self.close()
            raise read_error(display(str(self.path)), err, "not an mdfts index") from None
        self._queries: dict[str, StoredQuery] | None = None
        self._closed = False

    def __enter__(self) -> Index:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection, unless it came from from_connection() (its owner closes it)."""
        if self._owns:
            self.conn.close()
            self._closed = True

    def __repr__(self) -> str:
        return f"<Index {str(self.path)!r}>"

    @property
    def queries(self) -> dict[str, StoredQuery]:
        """The queries stored in the index, by name (read once)."""
        if self._closed:  # every lookup comes here first; sqlite3's error read as a broken index
            raise MdftsError(f"{display(str(self.path))}: this index is closed")
        if self._queries is None:
            try:
                self._queries = read_stored_queries(self.conn)
            except sqlite3.DatabaseError as err:  # no mdfts_queries: the message `mdfts info` gives
                raise read_error(display(str(self.path)), err, "not an mdfts index") from None
        return self._queries

    @property
    def name(self) -> str:
        """The index's name: its file stem (as Datasette and `mdfts mcp` name it)."""
        return self.path.stem

    def query_file(self, name: str) -> StoredQuery:
        """The stored query `name`; QueryError naming the ones there are when it is unknown."""
        return pick_query(self.queries, name)

    def sql(self, name: str) -> str:
        """The SQL of the stored query `name`, as the index carries it."""
        return self.query_file(name).sql

    def query(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Rows of the stored query `name` (the same as run())."""
        return self.run(name, **params)

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Rows of the stored query `name`, as dicts keyed by column; a parameter not given is NULL,
        a missing required one a QueryError naming it."""
        return run_query(self.conn, self.query_file(name), params)

    def info(self) -> dict[str, Any]:
        """Meta, counts and compatibility of the index, as one JSON-ready object."""
        return _info(self.path, self.conn, self.meta, list(self.queries))

    def search(self, q: str, limit: int = 10, explain: bool = False,
               path_prefix: str | None = None) -> list[Hit]:
        """The best sections for any text, best first, as Hit records.

        :param explain: attach the score's breakdown (`Hit.explain`) when the index's search.sql
            gives one; otherwise `explain` says it is not available.
        :param path_prefix: search only the documents whose path starts with this ("runbooks/").
        """
        from mdfts import lookup

        return lookup.search_hits(self, q, limit, explain, path_prefix)

    def search_many(self, queries: Iterable[str], limit: int = 10, explain: bool = False,
                    path_prefix: str | None = None) -> Iterator[tuple[str, list[Hit]]]:
        """(query, hits) for each query, in order."""
        from mdfts import lookup

        return lookup.search_many(self, queries, limit, explain, path_prefix)

    def show(self, ref: str | int) -> Hit | Outline:
        """The section a reference names: an id (`hit.id` or its digits), PATH#ANCHOR (any case)
        or PATH:LINE; for a bare PATH, that document's Outline. A miss raises RefError listing
        the nearest anchors."""
        from mdfts import lookup

        return lookup.show_ref(self, ref)

    def neighbors(self, ref: str | int) -> list[Hit]:
        """A section (relation "self") with its parent, previous, next and children."""
        from mdfts import lookup

        return lookup.neighbor_hits(self, ref)

    def section_page(self, section_id: int, max_children: int = 200) -> SectionPage | None:
        """A section with its ancestors, parent, previous, next and first children (headings
        only) and its exact tokens: what a page showing one section links to."""
        from mdfts import lookup

        return lookup.section_page(self, section_id, max_children)

    def token(self, tok: str, kind: str | None = None, limit: int = 20) -> list[Hit]:
        """Sections holding an exact token, case-exact ones first; `kind` keeps one token kind."""
        from mdfts import lookup

        return lookup.token_hits(self, tok, kind, limit)

    if TYPE_CHECKING:  # typing.overload is the type checker's alone
        @overload
        def outline(self, path: None = None) -> list[DocumentEntry]: ...
        @overload
        def outline(self, path: str) -> list[OutlineEntry] | list[DocumentEntry]: ...

    def outline(self, path: str | None = None) -> list[OutlineEntry] | list[DocumentEntry]:
        """A document's headings (refs, lines, token estimates); without a path, or with a folder
        prefix ending in "/", the documents."""
        from mdfts import lookup

        return lookup.outline_of(self, path)

    def context(self, question: str, max_tokens: int = 2000, format: Format = "xml",
                limit: int = 5, path_prefix: str | None = None,
                read_on: Callable[[Hit, int], str] | None = None) -> Context:
        """Prompt-ready sections for `question` in at most `max_tokens` tokens, counting all that is
        printed; `format` is xml, markdown or json. str(result) is the text.

        :param path_prefix: take sections only from the documents whose path starts with this.
        :param read_on: the call a cut match's note names to read on, given the section and the
            line its rest starts at; `fetch REF` when None.
        """
        from mdfts import lookup

        return lookup.context_block(self, question, max_tokens, format, limit, path_prefix=path_prefix,
                                    read_on=read_on)


def open_index(path: Path | str) -> Index:
    """The index at `path`, open read-only; IndexVersionError when it is not one this mdfts reads."""
    return Index(path)


def index_info(path: Path) -> dict[str, Any]:
    """info() of the index at `path`; an mdfts index of another schema is described too (as not
    compatible), anything else is the IndexVersionError every command gives."""
    db = connect(path, check=False)
    try:
        check_index(db, display(str(path)), schema=False)
        try:
            meta = read_meta(db)
            queries = list(read_stored_queries(db))
        except sqlite3.DatabaseError as err:
            raise read_error(display(str(path)), err, "not an mdfts index") from None
        return _info(Path(path), db, meta, queries)
    finally:
        db.close()


# mdfts_meta stores text; info() gives these as numbers (one vocabulary: numbers are numbers).
_NUMBERS = {"documents", "sections", "tokens", "files", "skipped", "schema_version", "built_at"}


def _info(path: Path, db: sqlite3.Connection, meta: dict[str, str], queries: list[str]) -> dict[str, Any]:
    from mdfts import __version__

    app_id = db.execute("pragma application_id").fetchone()[0]
    version = db.execute("pragma user_version").fetchone()[0]
    # The size of the file the connection reads, not of the path: a rebuild may have replaced it
    # since (os.replace), or someone deleted it, while an open Index still reads the old one.
    pages = db.execute("pragma page_count").fetchone()[0]
    return {
        "path": str(path),
        "bytes": pages * db.execute("pragma page_size").fetchone()[0],
        "application_id": app_id,
        "schema_version": version,
        "readable_schema_version": SCHEMA_VERSION,
        "compatible": app_id == APPLICATION_ID and version == SCHEMA_VERSION,
        "mdfts_version": __version__,
        "meta": {k: int(v) if k in _NUMBERS and v.isdigit() else v for k, v in meta.items()},
        "queries": queries,
    }
