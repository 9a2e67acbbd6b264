"""The index contract that build and read sides both import and neither owns: versions, token
kinds and their columns, the packaged SQL, and readers for mdfts_meta and mdfts_queries.

Imports nothing of mdfts but errors and frozen, and nothing slow: every `mdfts search` loads it
(no typing, dataclasses, string or urllib at import; tests/test_entry.py checks the first two).
"""

from __future__ import annotations

import json
import sqlite3

from mdfts.errors import IndexVersionError, MdftsError
from mdfts.frozen import FrozenRecord

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path
    from typing import Any, Literal

    # Kinds of exact token, in the order a token is tested (KINDS below: the same names, in the
    # same order; tests/test_tokens.py checks that).
    TokenKind = Literal[
        "url", "host", "cli_flag", "file_path", "env_var", "error_code",
        "identifier", "name", "version", "dotted", "code",
    ]
    # Where a token was seen, strongest first (SOURCES below).
    TokenSource = Literal["heading", "definition", "code", "fence", "text"]

SCHEMA_VERSION = 7  # PRAGMA user_version; mdfts_meta.schema_version
APPLICATION_ID = 0x6D646674  # "mdft"
TOKENIZER = "porter unicode61 remove_diacritics 2"

# Kinds of exact token, in the order a token is tested; a token gets the first kind that fits.
KINDS: tuple[TokenKind, ...] = (
    "url", "host", "cli_flag", "file_path", "env_var", "error_code",
    "identifier", "name", "version", "dotted", "code",
)
# Where a token was seen, strongest first: a heading, a definition (first column of a table
# row, or the code span that opens a paragraph or list item), a code span, a code block, prose.
SOURCES: tuple[TokenSource, ...] = ("heading", "definition", "code", "fence", "text")

# The sections column holding each kind's tokens (a JSON array), in schema.sql's column order.
KIND_COLUMNS: dict[TokenKind, str] = {
    "env_var": "env_vars", "cli_flag": "cli_flags", "error_code": "error_codes",
    "identifier": "identifiers", "name": "names", "version": "versions", "dotted": "dotted_names",
    "file_path": "file_paths", "url": "urls", "host": "hosts", "code": "code_spans",
}

# Descriptions of the columns whose schema.sql line carries no comment (schema.sql's own comments
# are stored in the index and read from there).
COLUMN_NOTES = {
    "id": "Row id; stable only within one build",
    "document_id": "The document (file) this section belongs to",
    "path": "File path relative to the docs root",
    "bytes": "Size of the file in bytes",
    "lines": "Number of lines in the file",
    "sections": "Number of sections in the file",
    "parent_id": "The enclosing section (one level up), if any",
    "prev_id": "The previous section in the same file",
    "next_id": "The next section in the same file",
    "key": "Name of the build fact",
    "value": "Its value",
    "name": "Query name: also the stored query's URL",
    "title": "One-line summary",
    "description": "The header comment of the query file",
    "sql": "The statement; parameters are :named",
    **{column: f"JSON array of the section's exact tokens of kind {kind}" for kind, column in KIND_COLUMNS.items()},
}


# --- packaged SQL ---------------------------------------------------------------------------------

def load_sql(name: str, package: str = "mdfts") -> str:
    """The text of a packaged .sql file: `schema`, `derive`, `diff_*` (package mdfts), or a
    shipped query (package mdfts.sql)."""
    from importlib.resources import files  # ~10 ms to import: only builds and diffs read SQL files

    return files(package).joinpath(f"{name}.sql").read_text(encoding="utf-8")


def packaged_sql_names(package: str = "mdfts.sql") -> list[str]:
    """The names of the .sql files in a package (default: the shipped queries), sorted."""
    from importlib.resources import files

    return sorted(e.name[:-4] for e in files(package).iterdir()
                  if e.name.endswith(".sql") and not e.name.startswith("_"))


# --- readers of an open index ---------------------------------------------------------------------

class StoredQuery(FrozenRecord):
    """A named query: a row of mdfts_queries, or a parsed queries/NAME.sql."""

    __slots__ = ("name", "title", "description", "params", "sql")
    name: str
    title: str        # the header's first line, after "name:"
    description: str  # the whole header, comment markers removed
    params: tuple[str, ...]
    sql: str

    def __init__(self, name: str, title: str, description: str, params: tuple[str, ...], sql: str) -> None:
        self._fill(name, title, description, params, sql)

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.name, self.title, self.description, json.dumps(list(self.params)), self.sql)

    @property
    def required(self) -> tuple[str, ...]:
        """The parameters the header marks `(required)`, e.g. `:token (required)`."""
        if "(required)" not in self.description:
            return ()
        import re

        marked = set(re.findall(r":([A-Za-z_]\w*)\s*\(required\)", self.description))
        return tuple(p for p in self.params if p in marked)


def is_index(conn: sqlite3.Connection) -> bool:
    """True when the database says it is an mdfts index (PRAGMA application_id)."""
    return bool(conn.execute("pragma application_id").fetchone()[0] == APPLICATION_ID)


def sqlite_reason(err: Exception) -> str:
    """SQLite's message, in one line: sqlite3 quotes text that is not UTF-8 into it, whole."""
    return str(err).split(" with text '", 1)[0] if str(err).startswith("Could not decode") else str(err)


def read_error(path: Path | str, err: sqlite3.Error, what: str) -> IndexVersionError:
    """The error for a file SQLite could not read: `what` and SQLite's reason, or for a damaged
    file (a truncated copy, a garbled page) that it is damaged."""
    reason = sqlite_reason(err)
    # SQLITE_CORRUPT says "malformed"; sqlite3 fails to decode the text of a garbled page
    if "malformed" in reason or reason.startswith("Could not decode"):
        return IndexVersionError(f"{path}: damaged or truncated index file ({reason}); build or copy it again")
    return IndexVersionError(f"{path}: {what} ({reason})")


def check_index(conn: sqlite3.Connection, path: Path | str, schema: bool = True) -> None:
    """Raise IndexVersionError, one message everywhere, unless `conn` is an mdfts index this mdfts
    reads (with `schema` False: an mdfts index of any schema version)."""
    try:
        app_id = conn.execute("pragma application_id").fetchone()[0]
        version = conn.execute("pragma user_version").fetchone()[0]
    except sqlite3.DatabaseError as err:
        raise read_error(path, err, "not an SQLite database") from None
    if app_id != APPLICATION_ID:
        raise IndexVersionError(f"{path}: not an mdfts index (application_id {app_id}); build one with mdfts build")
    if schema and version != SCHEMA_VERSION:
        raise IndexVersionError(f"{path}: schema {version}, this mdfts reads {SCHEMA_VERSION}; rebuild it")


def file_is_index(path: Path) -> bool:
    """Whether the file at `path` starts like an mdfts index (SQLite's header with our
    application_id at offset 68), read without opening it as a database."""
    try:
        with open(path, "rb") as fh:
            header = fh.read(100)
    except OSError:
        return False
    return header.startswith(b"SQLite format 3\0") and int.from_bytes(header[68:72], "big") == APPLICATION_ID


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """mdfts_meta as a dict, by key."""
    return dict(conn.execute("select key, value from mdfts_meta order by key").fetchall())


def read_stored_queries(conn: sqlite3.Connection) -> dict[str, StoredQuery]:
    """The queries stored in an index (mdfts_queries), by name: the SQL that fits its schema."""
    rows = conn.execute("select name, title, description, params, sql from mdfts_queries order by name")
    return {r[0]: StoredQuery(r[0], r[1], r[2], tuple(json.loads(r[3])), r[4]) for r in rows}


# --- source links ---------------------------------------------------------------------------------

SOURCE_URL_FIELDS = ("path", "start_line", "end_line", "commit", "anchor")


def check_source_url(template: str) -> None:
    """Raise unless `template` is a URL template using only the known fields."""
    import re
    import string

    try:
        names = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as err:
        raise MdftsError(f"--source-url {template!r}: {err}") from None
    unknown = [n for n in names if n not in SOURCE_URL_FIELDS]
    if unknown:
        raise MdftsError(f"--source-url: unknown field {{{unknown[0]}}}; use "
                         + ", ".join("{" + f + "}" for f in SOURCE_URL_FIELDS))
    if not re.match(r"^https?://", template):
        raise MdftsError(f"--source-url {template!r}: must start with http:// or https://")


def source_link(meta: Mapping[str, str], row: Mapping[str, Any]) -> str | None:
    """The URL of a section's source lines, from the index's source_url template (in `meta`);
    None when the index has none or the row lacks a field the template needs. `{commit}` falls
    back to HEAD."""
    template = meta.get("source_url")
    if not template or not row.get("path"):
        return None
    import string
    import urllib.parse

    values = {
        "path": urllib.parse.quote(str(row["path"]), safe="/"),
        "start_line": row.get("start_line"),
        "end_line": row.get("end_line"),
        "anchor": urllib.parse.quote(str(row.get("anchor") or ""), safe=""),
        "commit": meta.get("git_commit") or "HEAD",
    }
    needed = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    if any(values.get(f) is None for f in needed):
        return None
    return template.format(**values)
