"""Find, read and run the named query files of queries/ (shipped in the package and in each index)."""

from __future__ import annotations

import re
import sqlite3

from mdfts.artifact import StoredQuery, load_sql, packaged_sql_names, read_stored_queries, sqlite_reason
from mdfts.errors import QueryError

TYPE_CHECKING = False  # typing costs ~2 ms to import; mypy reads this name as True
if TYPE_CHECKING:
    from typing import Any

# Pattern strings, compiled on first use (re caches them): a lookup needs none of them.
_PARAM = r"(?<![:\w]):([A-Za-z_]\w*)"
_STRING_OR_COMMENT = r"(?s)'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/"
_SURROGATE = "[\ud800-\udfff]"


def clean_text(text: str) -> str:
    """Text that SQLite can take: lone surrogates (not encodable as UTF-8) become U+FFFD."""
    if text.isascii():
        return text
    return re.sub(_SURROGATE, "\ufffd", text)


def sql_params(sql: str) -> tuple[str, ...]:
    """The `:name` parameters a statement uses, in order of first use (strings and comments skipped)."""
    code = re.sub(_STRING_OR_COMMENT, " ", sql)
    return tuple(dict.fromkeys(re.findall(_PARAM, code)))


def parse_query(name: str, sql: str) -> StoredQuery:
    """A query file's header and SQL; an error when it has no header."""
    header = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        header.append(line[2:].strip())
    if not header:
        raise QueryError(f"queries/{name}.sql: no header comment")
    first = header[0]
    title = first.split(":", 1)[1].strip() if first.lower().startswith(f"{name}:") else first
    return StoredQuery(name, title, "\n".join(header), sql_params(sql), sql.strip() + "\n")


def package_queries() -> list[StoredQuery]:
    """The query files shipped with this mdfts, sorted by name."""
    return [parse_query(name, load_sql(name, "mdfts.sql")) for name in packaged_sql_names("mdfts.sql")]


index_queries = read_stored_queries  # the queries stored in an index, by name


def pick_query(found: dict[str, StoredQuery], name: str) -> StoredQuery:
    """The query `name` of `found`; an error listing the names there are."""
    if name not in found:
        raise QueryError(f"no query named {name!r}; this index has: {', '.join(found) or 'none'}")
    return found[name]


def get_query(db: sqlite3.Connection, name: str) -> StoredQuery:
    """The query `name` stored in an index."""
    return pick_query(read_stored_queries(db), name)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def run_query(db: sqlite3.Connection, query: StoredQuery, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows as dicts keyed by column name; every parameter not given is bound to NULL, as the
    sqlite3 shell does for an unset parameter. A missing `(required)` parameter is an error."""
    unknown = set(params) - set(query.params)
    if unknown:
        raise QueryError(f"query {query.name!r} takes {', '.join(':' + p for p in query.params) or 'no parameters'}; "
                         f"not {', '.join(':' + p for p in sorted(unknown))}")
    missing = [p for p in query.required if p not in params]
    if missing:
        raise QueryError(f"query {query.name!r}: missing required parameter {', '.join(':' + p for p in missing)}")
    bound = {p: clean_text(v) if isinstance(v, str) else v for p, v in ((p, params.get(p)) for p in query.params)}
    try:
        cur = db.execute(query.sql, bound)
        cols = [d[0] for d in cur.description or ()]
        return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    except (sqlite3.Error, OverflowError) as err:  # --param limit=abc: "datatype mismatch"; id=10**30
        given = ", ".join(f"{p}={_short(v)}" for p, v in sorted(params.items()))
        raise QueryError(f"query {query.name!r} failed ({given or 'no parameters'}): {sqlite_reason(err)}") from None
