"""Datasette settings generated from an index itself: metadata, stored queries, source links.

Imports no Datasette: `mdfts datasette-metadata` uses it without Datasette installed, and
datasette_plugin.py feeds the same dicts to a running Datasette.
"""

from __future__ import annotations

import json
import re
import sqlite3
import string
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mdfts.errors import MdftsError
from mdfts.write import APPLICATION_ID, KIND_COLUMNS

SOURCE_URL_FIELDS = ("path", "start_line", "end_line", "commit", "anchor")
# Tables a reader never needs to browse: the ranking's lookup tables. Datasette hides the
# sections_fts* tables by itself.
HIDDEN_TABLES = ("term_df", "token_df", "mdfts_stopwords", "mdfts_synonyms")
# Exact-token columns offered as array facets: the kinds people filter a docs tree by.
FACET_ARRAYS = ("env_vars", "cli_flags", "error_codes")
SQL_TIME_LIMIT_MS = 1000

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
# Columns whose schema line carries no comment.
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
}


@dataclass(frozen=True, slots=True)
class StoredQuery:
    name: str
    title: str
    description: str
    params: tuple[str, ...]
    sql: str


@dataclass(slots=True)
class IndexFacts:
    """What the generated settings need to know about one index, read once."""

    meta: dict[str, str]
    queries: list[StoredQuery]
    table_sql: dict[str, str] = field(default_factory=dict)  # table → CREATE statement

    @property
    def source_url(self) -> str | None:
        return self.meta.get("source_url") or None


def read_facts(conn: sqlite3.Connection) -> IndexFacts | None:
    """The facts of an mdfts index; None when the database is not one (by application_id)."""
    if conn.execute("pragma application_id").fetchone()[0] != APPLICATION_ID:
        return None
    tables = dict(conn.execute("select name, sql from sqlite_master where type = 'table'").fetchall())
    meta = dict(conn.execute("select key, value from mdfts_meta").fetchall()) if "mdfts_meta" in tables else {}
    queries = []
    if "mdfts_queries" in tables:
        for name, title, description, params, sql in conn.execute(
            "select name, title, description, params, sql from mdfts_queries order by name"
        ):
            queries.append(StoredQuery(name, title, description, tuple(json.loads(params)), sql))
    return IndexFacts(meta, queries, tables)


def read_facts_file(path: Path) -> IndexFacts:
    """read_facts() for a file; an error unless it is an mdfts index."""
    from mdfts.index import open_index

    db = open_index(path, check=False)
    try:
        facts = read_facts(db)
    except sqlite3.DatabaseError as err:
        raise MdftsError(f"{path}: not an mdfts index ({err})") from None
    finally:
        db.close()
    if facts is None:
        raise MdftsError(f"{path}: not an mdfts index (application_id); build one with mdfts build")
    return facts


_COLUMN_LINE = re.compile(r"^\s*([a-z_]\w*)\s+(?:text|integer|real|blob)\b(.*)$", re.I)


def column_descriptions(create_sql: str) -> dict[str, str]:
    """Column → description, from the comments in a CREATE TABLE statement as stored in the
    index; a comment on its own line describes the next column that has none."""
    out: dict[str, str] = {}
    pending: list[str] = []
    for line in create_sql.splitlines():
        stripped = line.strip()
        if stripped.startswith("--"):
            pending.append(stripped[2:].strip())
            continue
        m = _COLUMN_LINE.match(line)
        if not m:
            continue
        name, rest = m.groups()
        comment = rest.split("--", 1)[1].strip() if "--" in rest else " ".join(pending)
        pending = []
        if comment:
            out[name] = comment[0].upper() + comment[1:]
        elif name in COLUMN_NOTES:
            out[name] = COLUMN_NOTES[name]
    for kind, column in KIND_COLUMNS.items():
        if re.search(rf"^\s*{column}\s", create_sql, re.M):
            out[column] = f"JSON array of the section's exact tokens of kind {kind}"
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
    for q in facts.queries:
        if q.name in facts.table_sql:
            continue
        header = q.description.splitlines()
        out[q.name] = {
            "sql": q.sql,
            "title": f"{q.name}: {_sentence(q.title)}",
            "description": _usage(header) or _sentence(q.title),
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
            "label_column": "heading",
        }
    if "documents" in facts.table_sql:
        tables["documents"] = {"label_column": "path"}
    if "tokens" in facts.table_sql:
        tables["tokens"] = {"facets": ["kind", "source"]}
    for name in HIDDEN_TABLES:
        if name in facts.table_sql:
            tables[name] = {"hidden": True}
    return tables


def _table_metadata(facts: IndexFacts) -> dict[str, dict[str, Any]]:
    """Per-table descriptions: metadata in both Datasette 0.65 and 1.0."""
    tables: dict[str, dict[str, Any]] = {}
    for name, description in TABLE_DESCRIPTIONS.items():
        if name in facts.table_sql:
            tables[name] = {"description": description,
                            "columns": column_descriptions(facts.table_sql[name] or "")}
    return tables


def _database_description(facts: IndexFacts) -> str:
    m = facts.meta
    parts = [f"mdfts index of {m.get('source', '?')}: {m.get('documents', '?')} documents, "
             f"{m.get('sections', '?')} sections (mdfts {m.get('mdfts_version', '?')}, "
             f"schema {m.get('schema_version', '?')})."]
    if "git_commit" in m:
        parts.append(f"Source commit {m['git_commit']}.")
    parts.append("Start with the search query for ranked results.")
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
        "settings": {"sql_time_limit_ms": SQL_TIME_LIMIT_MS, "allow_download": False},
        "allow_sql": False,
        "databases": {
            name: {"tables": _table_settings(f), "queries": stored_queries(f)} for name, f in indexes.items()
        },
    }


def check_source_url(template: str) -> None:
    """Raise unless `template` is a URL template using only the known fields."""
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


def source_link(facts: IndexFacts, row: dict[str, Any]) -> str | None:
    """The URL of a section's source lines, from the index's source_url template; None when the
    index has none or the row lacks a field the template needs. `{commit}` falls back to HEAD."""
    template = facts.source_url
    if not template or not row.get("path"):
        return None
    values = {
        "path": urllib.parse.quote(str(row["path"]), safe="/"),
        "start_line": row.get("start_line"),
        "end_line": row.get("end_line"),
        "anchor": urllib.parse.quote(str(row.get("anchor") or ""), safe=""),
        "commit": facts.meta.get("git_commit") or "HEAD",
    }
    needed = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    if any(values.get(f) is None for f in needed):
        return None
    return template.format(**values)


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
    """Arguments for `datasette serve`: every index immutable, named by its file stem."""
    _named_indexes(paths)
    args = ["serve"]
    for path in paths:
        args += ["--immutable", str(path)]
    return args + [
        "--host", host, "--port", str(port),
        "--setting", "sql_time_limit_ms", str(time_limit_ms),
        "--setting", "default_allow_sql", "on" if allow_sql else "off",
        "--setting", "allow_download", "on" if allow_download else "off",
    ]
