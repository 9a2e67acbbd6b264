"""Datasette settings generated from an index itself: metadata, stored queries, source links.

Imports no Datasette: `mdfts datasette-metadata` uses it without Datasette installed, and
datasette_plugin.py feeds the same dicts to a running Datasette.
"""

from __future__ import annotations

import html
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mdfts.artifact import (
    COLUMN_NOTES,
    KIND_COLUMNS,
    StoredQuery,
    check_index,
    is_index,
    read_error,
    read_meta,
    read_stored_queries,
)
from mdfts.errors import MdftsError

# Tables a reader never needs to browse: the ranking's lookup tables. Datasette hides the
# sections_fts* tables by itself.
HIDDEN_TABLES = ("term_df", "token_df", "mdfts_pathwords", "mdfts_stopwords", "mdfts_synonyms", "mdfts_roles",
                 "mdfts_phrasal", "mdfts_plain", "mdfts_acronyms",
                 "token_rows", "token_norms",  # (the compact rows behind the view tokens)
                 "section_includes",  # (sections_full.included: the few sections with include directives)
                 "sections_indexed")  # (sections_fts's content; sections_full is the readable one)
# Exact-token columns offered as array facets: the kinds people filter a docs tree by.
FACET_ARRAYS = ("env_vars", "cli_flags", "error_codes")
SQL_TIME_LIMIT_MS = 1000
# `mdfts serve` and `mdfts mcp` cap their own address space: whatever a visitor's SQL (with
# --allow-sql), a page or an agent's call asks for, the server fails that request (MemoryError,
# "out of memory") instead of the machine running out. Datasette, uvicorn and their threads
# reserve ~0.6 GiB of it idle.
SERVE_MEMORY_BYTES = 2 << 30
# The longest string or blob one SQL value may be, at least: SQLite's default is 1 GB, which
# lets `select randomblob(900000000)` take seconds and a GB whatever the time limit.
MIN_VALUE_BYTES = 8 << 20


def value_limit(largest_file: int) -> int:
    """SQLITE_LIMIT_LENGTH for an index whose largest source file has `largest_file` bytes: every
    stored value must stay readable (a section or its token lists are at most a few times its
    file), nothing much larger may be made."""
    return max(MIN_VALUE_BYTES, 4 * largest_file)

TABLE_DESCRIPTIONS = {
    "sections": "One row per heading-bounded section of a markdown file (plus the lead text "
                "before the first heading). Search box: full-text, unranked; the search query "
                "ranks.",
    "documents": "One row per markdown file that was indexed.",
    "tokens": "Exact tokens (ENV_VARS, --flags, E1234, paths, versions) and the sections they "
              "occur in.",
    "mdfts_meta": "How and from what this index was built.",
    "mdfts_queries": "The queries shipped in this index, as SQL; the stored queries of this "
                     "database are these.",
}
# What each shipped query is for, as Datasette shows it: plain words, no engine terms. A query
# not named here gets the first line of its file's header.
PLAIN_QUERIES = {
    "search": ("Search the docs",
               "Type a few words, a question, an error code, an ENV_VAR or a --flag; the "
               "sections that answer it best come first. Prefix: search only the files whose "
               "path starts with it, such as runbooks/."),
    "token": ("Find an exact token",
              "Every section that contains an exact identifier, such as PAYMENTS_DB_URL, "
              "--force-with-lease or E1027 (case does not matter; exact case comes first)."),
    "section": ("Open one section",
                "One section by its id, or by its file path and heading anchor."),
    "neighbors": ("A section and its neighbours",
                  "A section with the one it sits under, the ones just before and after it, "
                  "and the ones under it."),
    "outline": ("Outline of a file",
                "The headings of one file, in order, as a table of contents."),
}


@dataclass(slots=True)
class IndexFacts:
    """What the generated settings need to know about one index, read once."""

    meta: dict[str, str]
    queries: list[StoredQuery]
    table_sql: dict[str, str] = field(default_factory=dict)  # table or view → CREATE statement

    @property
    def source_url(self) -> str | None:
        return self.meta.get("source_url") or None


def read_facts(conn: sqlite3.Connection) -> IndexFacts | None:
    """The facts of an mdfts index; None when the database is not one (by application_id)."""
    if not is_index(conn):
        return None
    tables = dict(conn.execute("select name, sql from sqlite_master where type in ('table', 'view')").fetchall())
    meta = read_meta(conn) if "mdfts_meta" in tables else {}
    queries = list(read_stored_queries(conn).values()) if "mdfts_queries" in tables else []
    return IndexFacts(meta, queries, tables)


def read_facts_file(path: Path) -> IndexFacts:
    """read_facts() for a file; an error unless it is an mdfts index (of any schema version)."""
    from mdfts.index import connect

    db = connect(path, check=False)
    try:
        check_index(db, path, schema=False)
        facts = read_facts(db)
    except sqlite3.DatabaseError as err:
        raise read_error(path, err, "not an mdfts index") from None
    finally:
        db.close()
    assert facts is not None  # check_index passed
    return facts


_COLUMN_LINE = re.compile(r"^\s*([a-z_]\w*)\s+(?:text|integer|real|blob)\b(.*)$", re.I)
# A view's column list: one name a line, with or without a comment (schema.sql's `sections`).
_VIEW_COLUMN_LINE = re.compile(r"^\s*([a-z_]\w*)(\s*,?\s*(?:--.*)?)$", re.I)


def column_descriptions(create_sql: str) -> dict[str, str]:
    """Column → description, from the comments in a CREATE TABLE statement as stored in the
    index; a comment on its own line describes the next column that has none, unless it sits
    right under a column's trailing comment, which it continues."""
    out: dict[str, str] = {}
    pending: list[str] = []
    trailing: tuple[str, int] | None = None  # the last column with a comment after it, and where
    for line in create_sql.splitlines():
        stripped = line.strip()
        if stripped.startswith("--"):
            text = stripped[2:].strip()
            if trailing and line.index("--") == trailing[1] and trailing[0] in out:
                out[trailing[0]] += " " + text  # aligned under that comment: the rest of it
            else:
                pending.append(text)
                trailing = None
            continue
        trailing = None
        m = _COLUMN_LINE.match(line) or _VIEW_COLUMN_LINE.match(line)
        if not m:
            continue
        name, rest = m.groups()
        comment = rest.split("--", 1)[1].strip() if "--" in rest else " ".join(pending)
        if "--" in rest:
            trailing = (name, line.index("--"))
        pending = []
        if comment:
            out[name] = comment[0].upper() + comment[1:]
        elif name in COLUMN_NOTES:
            out[name] = COLUMN_NOTES[name]
    for column in KIND_COLUMNS.values():  # one note a kind, over schema.sql's shared comment
        if re.search(rf"^\s*{column}[\s,]", create_sql, re.M):
            out[column] = COLUMN_NOTES[column]
    return out


def _sentence(text: str) -> str:
    text = text.strip().rstrip(".")
    return text[:1].upper() + text[1:]


def _usage(header: list[str]) -> str:
    """The params and returns lines of a query header, without the longer notes after them."""
    kept = []
    for line in header[1:]:
        if line[:1].isupper():
            break
        kept.append(line)
    return " ".join(" ".join(kept).split())


def stored_queries(facts: IndexFacts) -> dict[str, dict[str, Any]]:
    """Datasette stored ("canned") queries: one per query shipped in the index, SQL unchanged.

    A query named like a table (`documents`) is left out: Datasette would serve it at the
    table's URL and hide the table.
    """
    out: dict[str, dict[str, Any]] = {}
    order = list(PLAIN_QUERIES)
    for q in sorted(facts.queries, key=lambda q: (order.index(q.name) if q.name in order else len(order), q.name)):
        if q.name in facts.table_sql:
            continue
        header = q.description.splitlines()
        title, description = PLAIN_QUERIES.get(q.name, (_sentence(q.title), _usage(header)))
        out[q.name] = {
            "sql": q.sql,
            "title": title,
            "description": description or title,
            "params": list(q.params),
            "hide_sql": True,
        }
    return out


def _table_settings(facts: IndexFacts) -> dict[str, dict[str, Any]]:
    """Per-table settings that Datasette 1.0 calls configuration (not metadata)."""
    tables: dict[str, dict[str, Any]] = {}
    if "sections" in facts.table_sql:
        arrays = [c for c in FACET_ARRAYS if re.search(rf"\b{c}\b", facts.table_sql["sections"])]
        tables["sections"] = {
            "fts_table": "sections_fts",
            "fts_pk": "id",
            "facets": ["path", "level", *({"array": c} for c in arrays)],
            "facet_size": 10,  # (Datasette's 30 a facet put the first row screens down; "…" has the rest)
            "label_column": "heading",
            "size": 10,  # rows rendered per page: each body is markdown drawn on the server
        }
    if "sections_full" in facts.table_sql:  # a view: Datasette's own guess (rowid) finds no rows
        tables["sections_full"] = {"fts_table": "sections_fts", "fts_pk": "id", "size": 10}
    if "documents" in facts.table_sql:
        tables["documents"] = {"label_column": "path"}
    if "tokens" in facts.table_sql:
        # 20 rows a page: on a phone each is a card (Datasette's page of 100 was 100 screens).
        tables["tokens"] = {"facets": ["kind", "source"], "size": 20}
    for name in HIDDEN_TABLES:
        if name in facts.table_sql:
            tables[name] = {"hidden": True}
    return tables


def _described(description: str, columns: dict[str, str]) -> str:
    """A table's description as HTML, its column descriptions folded away in a <details>."""
    items = "".join(f"<dt>{html.escape(c)}</dt><dd>{html.escape(d)}</dd>" for c, d in columns.items())
    folded = (f'<details class="mdfts-columns"><summary>What the {len(columns)} columns mean</summary>'
              f"<dl>{items}</dl></details>") if columns else ""
    return f"<p>{html.escape(description)}</p>{folded}"


def _table_metadata(facts: IndexFacts) -> dict[str, dict[str, Any]]:
    """Per-table descriptions: metadata in both Datasette 0.65 and 1.0. `columns` feeds
    Datasette's column headings; the page shows the folded list from `description_html`."""
    tables: dict[str, dict[str, Any]] = {}
    for name, description in TABLE_DESCRIPTIONS.items():
        if name in facts.table_sql:
            columns = column_descriptions(facts.table_sql[name] or "")
            tables[name] = {"description": description, "description_html": _described(description, columns),
                            "columns": columns}
    return tables


def _database_description(facts: IndexFacts) -> str:
    m = facts.meta
    parts = [f"mdfts index of {m.get('source', '?')}: {m.get('documents', '?')} documents, "
             f"{m.get('sections', '?')} sections (mdfts {m.get('mdfts_version', '?')}, "
             f"schema {m.get('schema_version', '?')})."]
    if "git_commit" in m:
        parts.append(f"Source commit {m['git_commit']}.")
    return " ".join(parts)


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def database_metadata(facts: IndexFacts) -> dict[str, Any]:
    """One database's block of a Datasette 0.65 metadata.json: descriptions, table settings
    and stored queries together (0.65 reads all of them from metadata)."""
    return {
        "description": _database_description(facts),
        "tables": _merge(_table_metadata(facts), _table_settings(facts)),
        "queries": stored_queries(facts),
    }


def metadata_document(indexes: dict[str, IndexFacts]) -> dict[str, Any]:
    """A whole 0.65 metadata.json for the named databases (name = file stem)."""
    return {"databases": {name: database_metadata(f) for name, f in indexes.items()}}


def config_document(indexes: dict[str, IndexFacts]) -> dict[str, Any]:
    """A Datasette 1.0 datasette.yaml: stored queries and table settings, which 1.0 reads from
    configuration only; descriptions stay in metadata (`-m`)."""
    return {
        "settings": {"sql_time_limit_ms": SQL_TIME_LIMIT_MS, "allow_download": False,
                     "allow_csv_stream": False, "suggest_facets": False},
        "allow_sql": False,
        "databases": {
            name: {"tables": _table_settings(f), "queries": stored_queries(f)} for name, f in indexes.items()
        },
    }


def _named_indexes(paths: list[Path]) -> dict[str, IndexFacts]:
    """File stem (Datasette's database name) → facts; an error for a non-index or a repeated stem."""
    out: dict[str, IndexFacts] = {}
    seen: dict[str, Path] = {}
    for path in paths:
        if path.stem in seen:
            raise MdftsError(f"{path}: same database name {path.stem!r} as {seen[path.stem]}; rename one")
        seen[path.stem] = path
        out[path.stem] = read_facts_file(path)
    return out


def generated_settings(paths: list[Path], config: bool = False) -> dict[str, Any]:
    """`mdfts datasette-metadata`: a 0.65 metadata.json, or with `config` a 1.0 datasette.yaml."""
    indexes = _named_indexes(paths)
    return config_document(indexes) if config else metadata_document(indexes)


def serve_args(paths: list[Path], host: str, port: int, allow_sql: bool, allow_download: bool,
               time_limit_ms: int) -> list[str]:
    """Arguments for `datasette serve`: every index immutable, named by its file stem; no facet
    suggestions (a table page would run one query per column for them) and no streaming of
    whole tables as CSV unless downloads are allowed."""
    _named_indexes(paths)
    args = ["serve"]
    for path in paths:
        args += ["--immutable", str(path)]
    return args + [
        "--host", host, "--port", str(port),
        "--setting", "sql_time_limit_ms", str(time_limit_ms),
        "--setting", "default_allow_sql", "on" if allow_sql else "off",
        "--setting", "allow_download", "on" if allow_download else "off",
        "--setting", "allow_csv_stream", "on" if allow_download else "off",
        "--setting", "suggest_facets", "off",
    ]
