"""Find, read and run the named query files of queries/ (shipped in the package and in each index)."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import Any

from mdfts.errors import QueryError

_PARAM = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_STRING_OR_COMMENT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.S)


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """Text that SQLite can take: lone surrogates (not encodable as UTF-8) become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


@dataclass(frozen=True, slots=True)
class QueryFile:
    name: str
    title: str        # the header's first line, after "name:"
    description: str  # the whole header, comment markers removed
    params: tuple[str, ...]
    sql: str

    def row(self) -> tuple[str, str, str, str, str]:
        return (self.name, self.title, self.description, json.dumps(list(self.params)), self.sql)


def sql_params(sql: str) -> tuple[str, ...]:
    """The `:name` parameters a statement uses, in order of first use (strings and comments skipped)."""
    code = _STRING_OR_COMMENT.sub(" ", sql)
    return tuple(dict.fromkeys(_PARAM.findall(code)))


def parse_query(name: str, sql: str) -> QueryFile:
    header = []
    for line in sql.splitlines():
        if not line.startswith("--"):
            break
        header.append(line[2:].strip())
    if not header:
        raise QueryError(f"queries/{name}.sql: no header comment")
    first = header[0]
    title = first.split(":", 1)[1].strip() if first.lower().startswith(f"{name}:") else first
    return QueryFile(name, title, "\n".join(header), sql_params(sql), sql.strip() + "\n")


def package_queries() -> list[QueryFile]:
    """The query files shipped with this mdfts, sorted by name."""
    from importlib.resources import files  # only a build reads them: keep it off the query path

    out = []
    for entry in files("mdfts.sql").iterdir():
        if entry.name.endswith(".sql") and not entry.name.startswith("_"):
            out.append(parse_query(entry.name[:-4], entry.read_text(encoding="utf-8")))
    return sorted(out, key=lambda q: q.name)


def index_queries(db: sqlite3.Connection) -> dict[str, QueryFile]:
    """The queries stored in an index (mdfts_queries): the SQL that fits that index's schema."""
    rows = db.execute("select name, title, description, params, sql from mdfts_queries order by name")
    return {r[0]: QueryFile(r[0], r[1], r[2], tuple(json.loads(r[3])), r[4]) for r in rows}


def get_query(db: sqlite3.Connection, name: str) -> QueryFile:
    found = index_queries(db)
    if name not in found:
        raise QueryError(f"no query named {name!r}; this index has: {', '.join(found) or 'none'}")
    return found[name]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def run_query(db: sqlite3.Connection, query: QueryFile, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows as dicts keyed by column name; every parameter not given is bound to NULL, as the
    sqlite3 shell does for an unset parameter."""
    unknown = set(params) - set(query.params)
    if unknown:
        raise QueryError(f"query {query.name!r} takes {', '.join(':' + p for p in query.params) or 'no parameters'}; "
                         f"not {', '.join(':' + p for p in sorted(unknown))}")
    bound = {p: clean_text(v) if isinstance(v, str) else v for p, v in ((p, params.get(p)) for p in query.params)}
    try:
        cur = db.execute(query.sql, bound)
        cols = [d[0] for d in cur.description or ()]
        return [dict(zip(cols, row)) for row in cur.fetchall()]
    except sqlite3.Error as err:  # e.g. --param limit=abc: "datatype mismatch"
        given = ", ".join(f"{p}={_short(v)}" for p, v in sorted(params.items()))
        raise QueryError(f"query {query.name!r} failed ({given or 'no parameters'}): {err}") from None
