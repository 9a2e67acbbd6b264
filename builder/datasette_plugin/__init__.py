# mypy: disallow-untyped-decorators=False
# (datasette.hookimpl is untyped; the hooks themselves are typed.)
"""The Datasette plugin (entry point `mdfts`): every mdfts index Datasette opens gets a search-first
database page, results and sections as cards, stored queries, descriptions, facets, rendered
sections and source links, no config needed.

Indexes are recognised by PRAGMA application_id when Datasette starts; other databases are left
alone (the templates fall back to Datasette's own for them).
"""

from __future__ import annotations

import asyncio
import importlib.resources
import json
import posixpath
import re
import sqlite3
import sys
import urllib.parse
from collections.abc import Awaitable, Callable
from pathlib import PurePath
from typing import Any, TypeVar, cast
from weakref import WeakKeyDictionary

from datasette import hookimpl
from datasette.utils import (
    add_cors_headers,
    path_with_replaced_args,
    sqlite_timelimit,
    tilde_decode,
    urlsafe_components,
)
from datasette.utils.asgi import Base400, Forbidden, NotFound, Response
from datasette.views.base import DatasetteError
from markupsafe import Markup, escape

from mdfts.artifact import is_index, read_error, source_link, sqlite_reason
from mdfts.browse import HIDDEN_TABLES, IndexFacts, database_metadata, read_facts, stored_queries, value_limit
from mdfts.errors import IndexVersionError, QueryError, brief
from mdfts.index import Index
from mdfts.lookup import MAX_TOKENS, no_hits, why_no_hits
from mdfts.records import Hit, Outline, SectionLink, SectionPage
from mdfts.refs import RefError
from mdfts.render import LABEL_CHARS, PAGE_CHARS, PREVIEW_CHARS, label, render_section, snippet_html

# Datasette instance → {database name: facts}; filled by startup(), read by the other hooks.
_INDEXES: WeakKeyDictionary[Any, dict[str, IndexFacts]] = WeakKeyDictionary()
_METADATA: WeakKeyDictionary[Any, dict[str, Any]] = WeakKeyDictionary()

def _facts(datasette: Any, database: str | None) -> IndexFacts | None:
    return _INDEXES.get(datasette, {}).get(database or "")


@hookimpl
def prepare_connection(conn: sqlite3.Connection, database: str, datasette: Any) -> None:
    # Bound what one SQL value may grow to (randomblob, zeroblob, printf, group_concat), so
    # that no query, stored or (with --allow-sql) a visitor's, runs past the time limit inside
    # one function call or asks for a gigabyte; stored values stay readable.
    try:
        if not is_index(conn):
            return
        largest = conn.execute("select coalesce(max(bytes), 0) from documents").fetchone()[0]
    except sqlite3.DatabaseError:
        return
    if hasattr(conn, "setlimit"):  # Python 3.11+: 3.10's sqlite3 cannot set a limit
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, value_limit(int(largest)))


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
            _log_sql_errors_briefly(db, facts)
    _INDEXES[datasette] = found
    databases = {}
    for name, facts in found.items():
        block = database_metadata(facts)
        del block["queries"]  # served by canned_queries(), which Datasette 1.0 keeps too
        databases[name] = block
    _METADATA[datasette] = {"databases": databases}


def _log_sql_errors_briefly(db: Any, facts: IndexFacts) -> None:
    """Datasette writes a failed query's whole SQL and parameters to stderr: for search.sql,
    70 KB a visitor's `?limit=abc` repeats. For an index, write one line that names the stored
    query instead; the page still says what went wrong."""
    execute = db.execute
    names = {query["sql"]: name for name, query in stored_queries(facts).items()}

    async def execute_logging_briefly(sql: str, params: Any = None, *args: Any,
                                      log_sql_errors: bool = True, **kwargs: Any) -> Any:
        try:
            return await execute(sql, params, *args, log_sql_errors=False, **kwargs)
        except sqlite3.DatabaseError as err:
            if log_sql_errors:
                what = f"query {names[sql]}" if sql in names else f"sql {brief(repr(sql), 100)}"
                message = " ".join(str(err).splitlines())
                sys.stderr.write(f"ERROR: {db.name}: {what}: {message} (params: {brief(repr(params), 200)})\n")
                sys.stderr.flush()
            raise

    db.execute = execute_logging_briefly


@hookimpl
def get_metadata(datasette: Any, key: str, database: str | None, table: str | None) -> dict[str, Any]:
    # Datasette merges this under any metadata.json given with -m, which wins on conflicts.
    return _METADATA.get(datasette, {})


@hookimpl
def canned_queries(datasette: Any, database: str, actor: Any) -> dict[str, Any] | None:
    facts = _facts(datasette, database)
    return stored_queries(facts) if facts else None


def _default_facets(datasette: Any, database: str, table: str) -> set[tuple[str, str]]:
    """A table's default facets (metadata.json's, else the plugin's) as (query parameter,
    column): ("_facet", "path"), ("_facet_array", "env_vars")."""
    out = set()
    for facet in datasette.table_metadata(database, table).get("facets", ()):
        kind, column = next(iter(facet.items())) if isinstance(facet, dict) else ("", facet)
        out.add((f"_facet_{kind}" if kind else "_facet", str(column)))
    return out


@hookimpl
def asgi_wrapper(datasette: Any) -> Callable[[Any], Any]:
    # Datasette computes a facet twice when it is a default and also asked for (?_facet=path,
    # the documented URL): drop the request's copy before Datasette sees it, JSON included.
    def wrap(app: Any) -> Any:
        async def dedupe(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope.get("type") == "http" and b"_facet" in scope.get("query_string", b""):
                scope = _without_default_facets(datasette, scope)
            await app(scope, receive, send)

        return dedupe

    return wrap


def _without_default_facets(datasette: Any, scope: dict[str, Any]) -> dict[str, Any]:
    parts = scope.get("path", "").strip("/").split("/")
    if len(parts) != 2:
        return scope
    database, table = parts[0], parts[1].rsplit(".", 1)[0] if parts[1].endswith((".json", ".csv")) else parts[1]
    defaults = _default_facets(datasette, database, table) if _facts(datasette, database) else set()
    if not defaults:
        return scope
    pairs = urllib.parse.parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True)
    kept = [(k, v) for k, v in pairs if (k, v) not in defaults]
    if len(kept) == len(pairs):
        return scope
    return {**scope, "query_string": urllib.parse.urlencode(kept).encode("latin-1")}


# Table-page parameters Datasette reads without checking them: a bad value fails deep inside
# (int(_next) on a view, json.loads(_through), "Cannot sort table by") and is answered as a 500.
_UNCHECKED_PARAMS = ("_sort", "_sort_desc", "_next", "_through")


@hookimpl
def handle_exception(datasette: Any, request: Any, exception: Exception) -> Any:
    # On an index's pages, a visitor's error (a 4xx) is a page of the index: what went wrong,
    # then its search and the way back; so is a damaged index file (a 500). Other server errors
    # stay Datasette's.
    if request is None:
        return None
    parts = request.path.strip("/").split("/")
    database = tilde_decode(parts[0].split(".")[0])  # (/db.json, /db/table.json)
    if _facts(datasette, database) is None:
        return None
    error = _visitor_error(request, parts, exception) or _unreadable(datasette, database, exception)
    if error is None:
        return None
    if request.path.endswith(".json"):
        from datasette.handle_exception import handle_exception as default_handler

        return None if error is exception else default_handler(datasette, request, error)
    return _error_page(datasette, request, database, parts, error)


def _visitor_error(request: Any, parts: list[str], exception: Exception) -> Exception | None:
    """The 4xx this exception is, or None for a server error. A table-page parameter that
    Datasette reads unchecked fails as a 500 deep inside: it is a 400 that names the parameter."""
    is_4xx = isinstance(exception, (Base400, DatasetteError)) and getattr(exception, "status", 500) != 500
    if is_4xx:
        return exception
    given = [name for name in _UNCHECKED_PARAMS if name in request.args]
    if len(parts) != 2 or not given or not isinstance(exception, (DatasetteError, ValueError, TypeError, KeyError)):
        return None
    message = exception.message if isinstance(exception, DatasetteError) else str(exception)
    error: Exception = DatasetteError(f"Invalid {given[0]}: {message}", title="Invalid parameter", status=400)
    return error


def _unreadable(datasette: Any, database: str, exception: BaseException) -> Exception | None:
    """The error for an index SQLite cannot read (a garbled page, a truncated copy), found by
    Datasette's own reads or the plugin's (a QueryError, whose context is SQLite's error): the
    message every mdfts command gives, naming the file but not the server's folders."""
    cause = exception if isinstance(exception, sqlite3.Error) else exception.__context__
    if not isinstance(cause, sqlite3.DatabaseError):
        return None
    reason = sqlite_reason(cause)
    if type(cause) is not sqlite3.DatabaseError and not reason.startswith("Could not decode"):
        return None  # (interrupted, a bad parameter: Datasette's own answers)
    name = PurePath(datasette.get_database(database).path or database).name
    error: Exception = DatasetteError(str(read_error(name, cause, "not an mdfts index")),
                                      title="This index cannot be read", status=500)
    return error


async def _error_page(datasette: Any, request: Any, database: str, parts: list[str], error: Exception) -> Response:
    if isinstance(error, DatasetteError):
        status, title = error.status, error.title
        message = Markup(error.message) if error.message_is_html else error.message
    else:
        status, title, message = getattr(error, "status", 400), None, str(error.args[0] if error.args else "")
    # /db/sections/ID of an older build: ids change with every build, so say so.
    missing = tilde_decode(parts[2]) if status == 404 and len(parts) == 3 and parts[1] == "sections" else None
    html = await datasette.render_template("mdfts_error.html", {
        "database": database, "status": status, "error": message,
        "title": "Section not found" if missing is not None else title, "missing_section": missing,
    }, request=request)
    headers: dict[str, str] = {}
    if datasette.cors:
        add_cors_headers(headers)
    return Response.html(html, status=status, headers=headers)


@hookimpl
def register_routes() -> list[tuple[str, Any]]:
    # (Before Datasette's own routes, which would read /docs/-/mdfts-section as a row of a table "-".)
    return [(r"^/-/mdfts\.css$", _css), (r"^/(?P<database>[^/.]+)/-/mdfts-section$", _section_link)]


async def _section_link(datasette: Any, request: Any) -> Response:
    """/docs/-/mdfts-section?path=P&anchor=A: a redirect to the page of the section P#A names (as
    `mdfts show` reads the reference: any case, encoded or not), where a heading's link in a
    section goes; a miss is the plugin's 404 page naming the nearest anchors."""
    database = tilde_decode(request.url_vars["database"])
    facts = _facts(datasette, database)
    if facts is None:
        raise NotFound("Database not found")
    try:  # what the section page checks, and its words (Datasette's own: the action's name)
        await datasette.ensure_permissions(request.actor, [("view-table", (database, "sections")),
                                                           ("view-database", database), "view-instance"])
    except Forbidden:
        raise Forbidden("You do not have permission to view this table") from None
    ref = f"{request.args.get('path') or ''}#{request.args.get('anchor') or ''}"
    db = datasette.get_database(database)

    def find(conn: sqlite3.Connection) -> Hit | Outline:
        with sqlite_timelimit(conn, datasette.setting("sql_time_limit_ms")):
            return Index.from_connection(conn, db.path).show(ref)

    try:
        shown = await _read_section(db, find)
    except RefError as err:
        raise DatasetteError(str(err), title="Section not found", status=404) from None
    if not isinstance(shown, Hit):  # (a reference with "#" names a section)
        raise NotFound(f"no section {ref!r}")
    return Response.redirect(datasette.urls.row(database, "sections", str(shown.id)))


async def _css() -> Response:
    css = (importlib.resources.files(__name__) / "mdfts.css").read_text(encoding="utf-8")
    return Response(css, content_type="text/css; charset=utf-8")


# A folded section that fits in its fold needs no "show all" (nor the fade): mark it so.
FOLD_SCRIPT = """
document.querySelectorAll(".mdfts-fold").forEach(function (fold) {
  var clamp = fold.querySelector(".mdfts-clamp");
  if (clamp && clamp.scrollHeight <= clamp.clientHeight + 2) fold.classList.add("mdfts-fits");
});
"""


@hookimpl
def extra_body_script(database: str | None, datasette: Any) -> str:
    return FOLD_SCRIPT if _facts(datasette, database) else ""


@hookimpl
def extra_css_urls(database: str | None, datasette: Any) -> list[str]:
    return [datasette.urls.path("/-/mdfts.css")] if _facts(datasette, database) else []


def _row_dict(row: Any) -> dict[str, Any]:
    try:
        return dict(zip(row.keys(), row, strict=True))
    except (AttributeError, TypeError):
        return {}


def _trail(value: str) -> list[str] | None:
    """A stored trail's headings as a page names them (each cut to a label)."""
    try:
        trail = json.loads(value)
    except ValueError:
        return None
    return [label(str(t)) for t in trail] if isinstance(trail, list) else None


async def _rendered(body: str, limit: int, rewrite_link: Callable[[str], str | None] | None = None,
                    title: bool = False) -> Markup:
    # markdown-it is pure Python: off the event loop, so one big section cannot stall the
    # other requests; render_section() caps the size (and so the time) of the work.
    html = await asyncio.to_thread(render_section, body, limit, rewrite_link, title)
    return Markup('<div class="mdfts-body">{}</div>').format(Markup(html))


_MARKDOWN = (".md", ".markdown")


def _absolute(href: str) -> bool:
    """A link with its own scheme or host (http(s), mailto: render_html has dropped the rest)."""
    return bool(urllib.parse.urlsplit(href).scheme) or href.startswith("//")


def _no_links(href: str) -> str | None:
    """For a body whose file is not known: a relative link could go anywhere, so it is none."""
    return href if _absolute(href) else None


def _doc_links(datasette: Any, database: str, facts: IndexFacts, doc_path: str) -> Callable[[str], str | None]:
    """Where a link in `doc_path` goes on these pages. The docs link relative to the file, and
    the page is /db/sections/ID, so a relative target is resolved against the file's folder:
    a markdown file opens as its section's page (with an anchor) or the `outline` query (without);
    another file, its source lines when the index has a source URL; a target outside the docs,
    or a site path (/manual/x.html, on a site these pages do not know), is no link. Absolute
    URLs stay as they are."""
    base = datasette.urls.database(database)
    folder = posixpath.dirname(doc_path)

    def rewrite(href: str) -> str | None:
        if _absolute(href):
            return href
        if href.startswith("/"):
            return None
        target, _, anchor = href.partition("#")  # both as markdown-it percent-encoded them
        target, anchor = urllib.parse.unquote(target.partition("?")[0]), urllib.parse.unquote(anchor)
        path = posixpath.normpath(posixpath.join(folder, target)) if target else doc_path
        if path == "." or path.startswith(("../", "/")) or path == "..":  # (/ as %2F is decoded only above)
            return None
        if path.lower().endswith(_MARKDOWN):
            if anchor:  # the section's page, by way of a redirect (its id is not known here)
                return f"{base}/-/mdfts-section?" + urllib.parse.urlencode({"path": path, "anchor": anchor})
            return f"{base}/outline?" + urllib.parse.urlencode({"path": path})
        return source_link(facts.meta, {"path": path, "start_line": 1, "end_line": 1, "anchor": ""})

    return rewrite


def _source(facts: IndexFacts, fields: dict[str, Any], text: str | None = None) -> Markup | None:
    url = source_link(facts.meta, fields)
    if url is None:
        return None
    return _link(url, fields["start_line"], fields["end_line"], text if text is not None else fields["path"])


def _link(url: str, start: Any, end: Any, text: str) -> Markup:
    return Markup('<a class="mdfts-source" href="{}" title="source, lines {}–{}">{}</a>').format(url, start, end, text)


# Columns that name a section or a token: cut to a label in any table or query of an index.
_LABELS = frozenset({"heading", "title", "anchor", "token", "norm"})


@hookimpl
def render_cell(row: Any, value: Any, column: str, table: str | None, database: str,
                datasette: Any) -> Markup | Awaitable[Markup] | None:
    facts = _facts(datasette, database)
    if facts is None:
        return None
    if table == "tokens" and column == "section_id" and isinstance(value, int):
        return _section_label(datasette, database, value)
    if not isinstance(value, str):
        return None
    if column == "body":
        path = _row_dict(row).get("path")
        links = _doc_links(datasette, database, facts, path) if isinstance(path, str) else _no_links
        return _rendered(value, PREVIEW_CHARS, links)
    if column in _LABELS and len(value) > LABEL_CHARS:
        return Markup('{}<span class="mdfts-note"> ({:,} characters)</span>').format(label(value), len(value))
    if table != "mdfts_queries" and len(value) > PREVIEW_CHARS:  # `text`, token lists, front matter
        return Markup('{}<span class="mdfts-note"> … ({:,} characters)</span>').format(
            value[:PREVIEW_CHARS], len(value))
    if column == "trail" and value.startswith("["):
        trail = _trail(value)
        return None if trail is None else Markup(" › ").join(escape(t) for t in trail)
    if column == "path" and facts.source_url:
        fields = _row_dict(row)
        if table == "documents" and "lines" in fields:
            fields.update(start_line=1, end_line=fields["lines"], anchor="")
        return _source(facts, fields)
    return None


async def _section_label(datasette: Any, database: str, section_id: int) -> Markup:
    # `tokens` is a view (schema 4), so Datasette knows no foreign key to label the section by:
    # the same link and label it drew for the schema-3 table.
    db = datasette.get_database(database)
    row = (await db.execute("select heading, path from sections where id = ?", [section_id])).first()
    if row is None:
        return Markup("{}").format(section_id)
    return Markup('<a href="{}">{}</a>&nbsp;<em>{}</em>').format(
        datasette.urls.row(database, "sections", str(section_id)), label(row["heading"] or row["path"]), section_id)


# --- template variables: the cards ----------------------------------------------------------

def _where(facts: IndexFacts, row: Any) -> Markup:
    """`path:start-end`, a link to the source lines when the index has a source URL."""
    fields = _row_dict(row)
    text = f"{fields.get('path')}:{fields.get('start_line')}-{fields.get('end_line')}"
    return _source(facts, fields, text) or Markup('<span class="mdfts-where">{}</span>').format(text)


async def _snippet(body: str | None, q: str | None) -> Markup:
    return Markup(await asyncio.to_thread(snippet_html, body or "", q or ""))


async def _nothing_found(datasette: Any, database: str, q: str | None, prefix: str | None) -> str:
    """Why the stored search found nothing, in the words of `mdfts search` (lookup.why_no_hits)."""
    if not prefix:
        return no_hits(q or "")
    db = datasette.get_database(database)
    why: str = await db.execute_fn(lambda conn: why_no_hits(Index.from_connection(conn, db.path), q or "", prefix))
    return why


def _outline(datasette: Any, database: str, rows: list[Any]) -> Markup:
    """The outline query's rows as a table of contents: each heading a link to its section, in
    a list nested under the heading above it (lead text, level 0, sits beside the top level)."""
    parts = [Markup('<ul class="mdfts-outline">')]
    open_items: list[list[Any]] = []  # [level, whether its nested list is open] per open <li>
    for row in rows:
        level = max(int(row["level"] or 0), 1)
        while open_items and open_items[-1][0] >= level:
            parts.append(Markup("</ul></li>" if open_items.pop()[1] else "</li>"))
        if open_items and not open_items[-1][1]:
            parts.append(Markup("<ul>"))
            open_items[-1][1] = True
        parts.append(Markup('<li><a href="{}">{}</a> <span class="mdfts-muted">lines {}–{}</span>').format(
            datasette.urls.row(database, "sections", str(row["id"])), label(row["heading"]) or "(lead text)",
            row["start_line"], row["end_line"]))
        open_items.append([level, False])
    parts.extend(Markup("</ul></li>" if item[1] else "</li>") for item in reversed(open_items))
    parts.append(Markup("</ul>"))
    return Markup("").join(parts)


# How a shipped query defaults its row count: `limit coalesce(nullif(:limit, ''), 10)`.
_DEFAULT_LIMIT = re.compile(r"coalesce\(\s*nullif\(\s*:limit\s*,\s*''\s*\)\s*,\s*(\d+)\s*\)")


def _more_results(facts: IndexFacts, query: str, request: Any, shown: int) -> str | None:
    """The same query with twice the rows, when the page shows as many as its limit (the given
    one, else the query's default): there may be more."""
    given = request.args.get("limit") or ""
    default = next((_DEFAULT_LIMIT.search(q.sql) for q in facts.queries if q.name == query), None)
    limit = int(given) if given.isdigit() else int(default.group(1)) if default else 0
    if not 0 < limit <= shown:
        return None
    return str(path_with_replaced_args(request, {"limit": str(limit * 2)}))


def _cells(row: Any) -> dict[str, Any]:
    """A table page's rendered row (a list of cells) as column → cell."""
    return {cell["column"]: cell for cell in row}


_T = TypeVar("_T")
# A section page shows this many of its exact tokens, and folds the rest (a reference table of
# settings has hundreds: screens of chips before the page's links).
TOKENS_SHOWN = 40


async def _read_section(db: Any, read: Callable[[sqlite3.Connection], _T]) -> _T:
    """`read` run in Datasette's SQL thread; stopped at the time limit, the plugin's page saying
    so, as Datasette answers a query that runs past it: a 400, not a server error."""
    try:
        return cast("_T", await db.execute_fn(read))
    except (sqlite3.OperationalError, QueryError) as err:
        # The read layer's QueryError holds SQLite's error as its context (raised `from None`).
        cause = err if isinstance(err, sqlite3.OperationalError) else err.__context__
        if not (isinstance(cause, sqlite3.OperationalError) and "interrupted" in str(cause)):
            raise
        raise DatasetteError("Reading this section took longer than the SQL time limit "
                             "(the sql_time_limit_ms setting).", title="SQL Interrupted", status=400) from None


def _read_page(conn: sqlite3.Connection, path: str | None, section_id: int, limit_ms: int) -> SectionPage | None:
    # In Datasette's SQL thread, on its connection: the read layer wraps it (and leaves it
    # open), within the same time limit Datasette puts on its own queries.
    with sqlite_timelimit(conn, limit_ms):
        return Index.from_connection(conn, path).section_page(section_id)


async def _section_page(datasette: Any, database: str, facts: IndexFacts, pk: str) -> dict[str, Any] | None:
    values = urlsafe_components(pk)  # as Datasette reads it: /sections/~31 is section 1
    if len(values) != 1:
        return None
    try:
        section_id = int(values[0])
    except ValueError:
        return None
    db = datasette.get_database(database)
    try:
        page = await _read_section(
            db, lambda conn: _read_page(conn, db.path, section_id, datasette.setting("sql_time_limit_ms")))
    except IndexVersionError:
        return None  # an index of another schema: Datasette's own row page
    if page is None:
        return None
    hit = page.section
    html = await asyncio.to_thread(render_section, hit.body, PAGE_CHARS,
                                   _doc_links(datasette, database, facts, hit.path), True)
    title, body = _title_first(html, label(hit.heading) or hit.path)
    return {
        "section": hit,
        "heading": label(hit.heading),
        "chars": page.chars,
        "where": _source_of(hit),
        "title": title,
        "body": body,
        "trail": [label(t) for t in hit.trail] or [label(hit.heading)],
        "ancestors": [_labelled(a) for a in page.ancestors],
        "parent": _labelled(page.parent),
        "previous": _labelled(page.previous),
        "next": _labelled(page.next),
        "children": [_labelled(c) for c in page.children],
        "more_children": page.more_children,
        # A token longer than a label is shown cut, and not as a link to the token query.
        "tokens": [{"token": label(t.token), "kind": t.kind, "link": t.token if len(t.token) <= LABEL_CHARS else None}
                   for t in page.tokens],
        "tokens_shown": TOKENS_SHOWN,  # the rest folded, behind "Show all N"
        "more_tokens": len(page.tokens) >= MAX_TOKENS,  # (the page reads that many at most)
        "has_neighbors": any(q.name == "neighbors" for q in facts.queries),
        "has_outline": any(q.name == "outline" for q in facts.queries),
        "has_token": any(q.name == "token" for q in facts.queries),
    }


def _title_first(html: str, name: str) -> tuple[Markup, Markup]:
    """A section page's h1, and the rest of its rendered section. The page's one h1 names the
    section: its own heading, drawn as h1 (render_section draws no other), taken out to come
    first, before the source line and any note on what is not drawn; else (lead text, a section
    shown as its source text) one the page adds."""
    start = html.find("<h1>")
    if start < 0:
        return Markup('<h1 class="mdfts-h1">{}</h1>').format(name), Markup(html)
    end = html.index("</h1>", start) + len("</h1>")
    return Markup(html[start:end]), Markup(html[:start] + html[end:])


def _labelled(link: SectionLink | None) -> SectionLink | None:
    return link if link is None or len(link.heading) <= LABEL_CHARS else SectionLink(link.id, label(link.heading))


def _source_of(hit: Hit) -> Markup:
    """A Hit's `path:start-end`, linked to its source lines when it has a url (as _where())."""
    if hit.url is None:
        return Markup('<span class="mdfts-where">{}</span>').format(hit.lines)
    return _link(hit.url, hit.start_line, hit.end_line, hit.lines)


@hookimpl
def extra_template_vars(template: str, database: str | None, table: str | None, view_name: str,
                        request: Any, datasette: Any) -> Callable[[], Awaitable[dict[str, Any]]]:
    async def inner() -> dict[str, Any]:
        facts = _facts(datasette, database)
        if facts is None or database is None:
            return {"mdfts": None}
        names = {q.name for q in facts.queries}
        out: dict[str, Any] = {
            "database": database,
            "has_search": "search" in names and "search" in stored_queries(facts),
            "has_token": "token" in names,
            "hidden": HIDDEN_TABLES,  # (Datasette lists a hidden view with the others)
            "source_url": facts.source_url,
            "where": lambda row: _where(facts, row),
            "cells": _cells,
            "more_results": lambda query, shown: _more_results(facts, query, request, shown),
            "outline": lambda rows: _outline(datasette, database, rows),
            "trail": lambda value: _trail(value) if isinstance(value, str) else None,
            "label": lambda value: label(str(value)) if value is not None else value,
            "label_chars": LABEL_CHARS,
            "snippet": _snippet,
            "nothing_found": lambda q, prefix: _nothing_found(datasette, database, q, prefix),
        }
        if template == "row.html" and table == "sections" and request is not None:
            pk = request.url_vars.get("pks", "")
            out["page"] = await _section_page(datasette, database, facts, pk)
        return {"mdfts": out}

    return inner
