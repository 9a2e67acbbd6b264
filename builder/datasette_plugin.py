# mypy: disallow-untyped-decorators=False
# (datasette.hookimpl is untyped; the hooks themselves are typed.)
"""The Datasette plugin (entry point `mdfts`): every mdfts index Datasette opens gets its search
box, stored queries, descriptions, facets, rendered sections and source links, no config needed.

Indexes are recognised by PRAGMA application_id when Datasette starts; other databases are left alone.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from weakref import WeakKeyDictionary

from datasette import hookimpl
from datasette.utils.asgi import Response
from markupsafe import Markup, escape

from mdfts.artifact import source_link
from mdfts.browse import IndexFacts, database_metadata, read_facts, stored_queries

# Rendered sections sit in table cells: keep their headings small and long bodies scrollable.
CSS = """
.mdfts-body { max-width: 42em; max-height: 26em; overflow: auto; }
.mdfts-body h1, .mdfts-body h2, .mdfts-body h3, .mdfts-body h4, .mdfts-body h5, .mdfts-body h6 {
  font-size: 1.05em; margin: 0 0 0.4em 0; }
.mdfts-body p, .mdfts-body ul, .mdfts-body ol, .mdfts-body pre { margin: 0 0 0.5em 0; }
.mdfts-body pre { white-space: pre-wrap; }
"""

# Datasette instance → {database name: facts}; filled by startup(), read by the other hooks.
_INDEXES: WeakKeyDictionary[Any, dict[str, IndexFacts]] = WeakKeyDictionary()
_METADATA: WeakKeyDictionary[Any, dict[str, Any]] = WeakKeyDictionary()


def _facts(datasette: Any, database: str | None) -> IndexFacts | None:
    return _INDEXES.get(datasette, {}).get(database or "")


@hookimpl
async def startup(datasette: Any) -> None:
    found: dict[str, IndexFacts] = {}
    for name, db in datasette.databases.items():
        if db.is_memory:
            continue
        try:
            facts = await db.execute_fn(read_facts)
        except sqlite3.DatabaseError:
            continue
        if facts is not None:
            found[name] = facts
    _INDEXES[datasette] = found
    databases = {}
    for name, facts in found.items():
        block = database_metadata(facts)
        del block["queries"]  # served by canned_queries(), which Datasette 1.0 keeps too
        databases[name] = block
    _METADATA[datasette] = {"databases": databases}


@hookimpl
def get_metadata(datasette: Any, key: str, database: str | None, table: str | None) -> dict[str, Any]:
    # Datasette merges this under any metadata.json given with -m, which wins on conflicts.
    return _METADATA.get(datasette, {})


@hookimpl
def canned_queries(datasette: Any, database: str, actor: Any) -> dict[str, Any] | None:
    facts = _facts(datasette, database)
    return stored_queries(facts) if facts else None


@hookimpl
def register_routes() -> list[tuple[str, Any]]:
    return [(r"^/-/mdfts\.css$", _css)]


async def _css() -> Response:
    return Response(CSS, content_type="text/css; charset=utf-8")


@hookimpl
def extra_css_urls(database: str | None, datasette: Any) -> list[str]:
    return [datasette.urls.path("/-/mdfts.css")] if _facts(datasette, database) else []


def _row_dict(row: Any) -> dict[str, Any]:
    try:
        return dict(zip(row.keys(), row, strict=True))
    except (AttributeError, TypeError):
        return {}


@hookimpl
def render_cell(row: Any, value: Any, column: str, table: str | None, database: str,
                datasette: Any) -> Markup | None:
    facts = _facts(datasette, database)
    if facts is None or not isinstance(value, str):
        return None
    if column == "body":
        from mdfts.parse import render_html

        return Markup('<div class="mdfts-body">{}</div>').format(Markup(render_html(value)))
    if column == "trail" and value.startswith("["):
        try:
            trail = json.loads(value)
        except ValueError:
            return None
        if isinstance(trail, list):
            return Markup(" › ").join(escape(str(t)) for t in trail)
        return None
    if column == "path" and facts.source_url:
        fields = _row_dict(row)
        if table == "documents" and "lines" in fields:
            fields.update(start_line=1, end_line=fields["lines"], anchor="")
        url = source_link(facts.meta, fields)
        if url is None:
            return None
        lines = f"lines {fields['start_line']}–{fields['end_line']}"
        return Markup('<a class="mdfts-source" href="{}" title="source, {}">{}</a>').format(url, lines, value)
    return None
