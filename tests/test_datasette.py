"""Datasette: the plugin's hooks in process (Datasette's own client, set up as `mdfts serve`
sets it up), `mdfts datasette-metadata`, and one real `mdfts serve` on 127.0.0.1 with a real
headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("datasette", reason="Datasette is not installed: pip install -e '.[datasette]'")

from datasette import hookimpl  # noqa: E402
from dsserve import mdfts_serve  # noqa: E402
from markupsafe import escape  # noqa: E402

from mdfts.artifact import check_source_url, source_link  # noqa: E402
from mdfts.browse import column_descriptions  # noqa: E402
from mdfts.build import build_index  # noqa: E402
from mdfts.cli import cli  # noqa: E402
from mdfts.errors import MdftsError  # noqa: E402

from conftest import InProcessDatasette  # noqa: E402

FIXTURE_DOCS = Path(__file__).parent / "fixtures" / "datasette"
SOURCE_URL = "https://example.com/ops/blob/{commit}/{path}#L{start_line}-L{end_line}"
DB_NAME = "ops-docs"


@pytest.fixture(scope="module")
def index_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # A copy outside any git checkout, so no commit is recorded and links say HEAD.
    docs = tmp_path_factory.mktemp("docs") / "datasette"
    shutil.copytree(FIXTURE_DOCS, docs)
    out = tmp_path_factory.mktemp("index") / f"{DB_NAME}.db"
    build_index([docs], out, source_url=SOURCE_URL)
    return out


@pytest.fixture(scope="module")
def site(index_db: Path, datasette_client: Callable[..., InProcessDatasette]) -> InProcessDatasette:
    """The index in Datasette, in process, with `mdfts serve`'s defaults."""
    return datasette_client(index_db)


@pytest.fixture(scope="module")
def server(index_db: Path) -> Iterator[str]:
    """A real `mdfts serve` of the index on 127.0.0.1: for the smoke test and the browser."""
    with mdfts_serve(index_db) as (base, _):
        yield base


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def get_json(url: str) -> Any:
    status, body = get(url)
    assert status == 200, body[:500]
    return json.loads(body)


# --- the stored search query, table search, and what is refused ---------------------------

@pytest.mark.parametrize(
    ("q", "path", "heading", "lines"),
    [
        ("payments rollback", "runbooks/payments.md", "Rollback procedure", (5, 13)),
        ("E2001", "reference/error-codes.md", "E2001", (8, 12)),
        ("restart the billing exporter", "runbooks/billing.md", "Restarting the exporter", (5, 9)),
    ],
    ids=["words", "error-code", "question"],
)
def test_search_query_ranks_the_right_section_first(site: InProcessDatasette, q: str, path: str, heading: str,
                                                     lines: tuple[int, int]) -> None:
    rows = site.get_json(f"/{DB_NAME}/search.json?" + urllib.parse.urlencode({"q": q, "_shape": "array"}))
    first = rows[0]
    assert (first["path"], first["heading"], first["start_line"], first["end_line"]) == (path, heading, *lines)


def test_search_query_takes_a_limit_and_survives_hostile_text(site: InProcessDatasette) -> None:
    rows = site.get_json(f"/{DB_NAME}/search.json?q=payments&limit=1&_shape=array")
    assert len(rows) == 1
    for q in ['"', "NEAR(", "path:", "'; drop table sections; --", ""]:
        assert isinstance(site.get_json(f"/{DB_NAME}/search.json?"
                                   + urllib.parse.urlencode({"q": q, "_shape": "array"})), list)


def test_the_search_page_searches_within_its_prefix(site: InProcessDatasette) -> None:
    # search.sql's :prefix (the CLI's --path-prefix, MCP's and Python's path_prefix): the page
    # offers it, as its description says, and the next search from the form keeps it.
    status, page = site.get(f"/{DB_NAME}/search?q=rollback&prefix=reference/")
    assert status == 200
    form = page[page.index('<form class="mdfts-search'):page.index("</form>")]
    assert re.search(r'<input id="mdfts-prefix" type="text" name="prefix" value="reference/"', form), form
    paths = re.findall(r'class="mdfts-source"[^>]*>([^<:]+):', page)
    assert paths and set(paths) == {"reference/error-codes.md"}
    _, plain = site.get(f"/{DB_NAME}/search?q=rollback")
    assert '<input id="mdfts-prefix" type="text" name="prefix" value=""' in plain


@pytest.mark.parametrize(("query", "said"), [
    ("q=***+--", "no usable search term: '*** --'"),
    ("q=zqxvvz", "no section matches: 'zqxvvz'"),
    ("q=rollback&prefix=nope/", "no document's path starts with 'nope/'"),
    ("q=***&prefix=nope/", "no document's path starts with 'nope/'"),
], ids=["no-term", "no-match", "no-such-prefix", "both"])
def test_a_search_with_no_hits_says_why_as_the_cli_does(site: InProcessDatasette, query: str, said: str) -> None:
    # `mdfts search`, MCP and llm tell these apart; the page said "Nothing found." to all three.
    status, page = site.get(f"/{DB_NAME}/search?{query}")
    assert status == 200 and "mdfts-card" not in page
    assert f'<p class="zero-results">{escape(said)}</p>' in page


def test_table_search_box_filters_sections(site: InProcessDatasette) -> None:
    everything = site.get_json(f"/{DB_NAME}/sections.json?_shape=array&_col=heading")
    found = site.get_json(f"/{DB_NAME}/sections.json?_search=exporter&_shape=array&_col=heading")
    assert len(everything) == 9
    assert [r["heading"] for r in found] == ["Restarting the exporter"]


def test_stored_queries_come_from_the_index(site: InProcessDatasette, index_db: Path) -> None:
    db = site.get_json(f"/{DB_NAME}.json")
    assert sorted(q["name"] for q in db["queries"]) == ["neighbors", "outline", "search", "section", "token"]
    rows = site.get_json(f"/{DB_NAME}/token.json?token=e1027&_shape=array")
    assert [(r["path"], r["heading"], r["exact"]) for r in rows] == [
        ("reference/error-codes.md", "E1027", 0), ("runbooks/payments.md", "Rollback procedure", 0)]
    section_id = rows[1]["id"]
    around = site.get_json(f"/{DB_NAME}/neighbors.json?id={section_id}&_shape=array")
    assert [(r["relation"], r["heading"]) for r in around] == [
        ("self", "Rollback procedure"), ("parent", "Payments runbook"),
        ("previous", "Payments runbook"), ("next", "Scaling the workers")]


def test_helper_tables_are_hidden_and_sections_searchable(site: InProcessDatasette) -> None:
    tables = {t["name"]: t for t in site.get_json(f"/{DB_NAME}.json")["tables"]}
    hidden = sorted(name for name, t in tables.items() if t["hidden"])
    assert hidden == ["mdfts_acronyms", "mdfts_pathwords", "mdfts_phrasal", "mdfts_plain", "mdfts_roles", "mdfts_stopwords", "mdfts_synonyms",
                      "section_includes", "sections_fts",
                      "sections_fts_config", "sections_fts_data", "sections_fts_docsize", "sections_fts_idx", "term_df", "token_df",
                      "token_norms", "token_rows"]
    assert tables["sections"]["fts_table"] == "sections_fts"


def test_sections_have_default_facets(site: InProcessDatasette) -> None:
    facets = site.get_json(f"/{DB_NAME}/sections.json?_size=1")["facet_results"]
    assert list(facets) == ["path", "level", "env_vars", "cli_flags", "error_codes"]
    assert facets["error_codes"]["type"] == "array"
    assert {r["value"] for r in facets["error_codes"]["results"]} == {"E1027", "E2001"}


@pytest.mark.parametrize(
    "query",
    ["_search=rollback&_facet=path", "_facet=level&_facet_array=env_vars", "_facet=path&_facet=heading"],
)
def test_a_default_facet_asked_for_is_computed_once(datasette_client: Any, index_db: Path, query: str) -> None:
    # Today Datasette answers the documented ?_search=...&_facet=path with path and path_2.
    facets = datasette_client(index_db).get_json(f"/{DB_NAME}/sections.json?_size=0&{query}")["facet_results"]
    expected = ["path", "level", "env_vars", "cli_flags", "error_codes"]
    assert list(facets) == (expected[:2] + ["heading"] + expected[2:] if "heading" in query else expected)


@pytest.mark.parametrize(
    "path",
    [f"/{DB_NAME}.json?sql=select+1", f"/{DB_NAME}?sql=select+1", f"/{DB_NAME}.db"],
    ids=["sql-json", "sql-html", "download"],
)
def test_arbitrary_sql_and_download_are_refused(site: InProcessDatasette, path: str) -> None:
    status, _ = site.get(path)
    assert status == 403


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("sections?_sort=nope", "Cannot sort table by nope"),
        ("sections.json?_sort_desc=nope", "Cannot sort table by nope"),
        ("tokens?_next=zzz", "invalid literal for int() with base 10: &#39;zzz&#39;"),
        ("sections?_through=abc", "Expecting value: line 1 column 1 (char 0)"),
        ("sections?_through=[]", "list indices must be integers or slices, not str"),
        ('sections?_through={"table":"x"}', "&#39;column&#39;"),
    ],
    ids=["sort", "sort-desc-json", "next-on-a-view", "through-not-json", "through-a-list", "through-no-column"],
)
def test_a_bad_sort_or_paging_parameter_is_a_400(site: InProcessDatasette, query: str, message: str) -> None:
    # Datasette's table page reads these without checking them and answers a bad one with a 500.
    status, page = site.get(f"/{DB_NAME}/{query}")
    assert status == 400, page[:300]
    if ".json" in query:
        assert json.loads(page)["error"] == f"Invalid _sort_desc: {message}"
    else:
        assert f"Invalid {query.split('?')[1].split('=')[0]}: {message}" in page


def test_allow_sql_opts_in(index_db: Path, datasette_client: Callable[..., InProcessDatasette]) -> None:
    site = datasette_client(index_db, allow_sql=True)
    rows = site.get_json(f"/{DB_NAME}.json?sql=select+count(*)+as+n+from+sections&_shape=array")
    assert rows == [{"n": 9}]
    assert site.get(f"/{DB_NAME}.db")[0] == 403


def test_plugin_leaves_other_databases_alone(index_db: Path, tmp_path: Path,
                                             datasette_client: Callable[..., InProcessDatasette]) -> None:
    other = tmp_path / "notes.db"
    with sqlite3.connect(other) as db:
        db.execute("create table sections (id integer primary key, path text, body text)")
        db.execute("insert into sections values (1, 'a.md', '# Title')")
    db.close()
    site = datasette_client(index_db, others=[other])
    assert len(site.get_json(f"/{DB_NAME}.json")["queries"]) == 5
    assert site.get_json("/notes.json")["queries"] == []
    _, page = site.get("/notes/sections")
    assert '<td class="col-body type-str"># Title</td>' in page and "mdfts.css" not in page


def test_plugin_serves_its_css_to_index_pages_only(site: InProcessDatasette) -> None:
    status, css = site.get("/-/mdfts.css")
    assert status == 200 and ".mdfts-body {" in css
    assert '/-/mdfts.css"' in site.get(f"/{DB_NAME}/sections")[1]


class _DatabaseColorAsIn1_0:
    """Datasette 1.0 gives templates `database_color` as the colour itself; 0.65 as a function
    of the database name. This plugin gives the database page 1.0's, on the 0.65 installed."""

    @hookimpl
    def extra_template_vars(self, view_name: str) -> dict[str, str]:
        return {"database_color": "c0ffee"} if view_name == "database" else {}


@pytest.mark.parametrize("color", ["ff0000", "c0ffee"], ids=["0.65-function", "1.0-string"])
def test_the_database_page_takes_either_kind_of_database_color(site: InProcessDatasette, color: str) -> None:
    from datasette.plugins import pm

    shim = _DatabaseColorAsIn1_0() if color == "c0ffee" else None
    if shim:
        pm.register(shim, name="database-color-as-in-1.0")
    try:
        status, page = site.get(f"/{DB_NAME}")
    finally:
        if shim:
            pm.unregister(shim)
    assert status == 200, page[:300]
    assert f'<div class="page-header" style="border-color: #{color}">' in page


class _Py310Connection:
    """sqlite3.Connection as Python 3.10 has it: no setlimit() (added in 3.11)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        return self._conn.execute(sql, *args)


def test_plugin_opens_indexes_where_sqlite3_cannot_set_limits(index_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mdfts.browse import MIN_VALUE_BYTES
    from mdfts.datasette_plugin import prepare_connection

    conn = sqlite3.connect(f"file:{index_db}?mode=ro", uri=True)
    try:
        prepare_connection(conn, DB_NAME, None)  # 3.11+: the length limit is set
        assert conn.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == MIN_VALUE_BYTES
        # 3.10 has neither the method nor the constant: Datasette still opens the index.
        monkeypatch.delattr(sqlite3, "SQLITE_LIMIT_LENGTH")
        prepare_connection(_Py310Connection(conn), DB_NAME, None)  # type: ignore[arg-type]
    finally:
        conn.close()


# --- one real server ----------------------------------------------------------------------

@pytest.mark.integration
def test_mdfts_serve_answers_on_localhost_and_refuses_sql(server: str) -> None:
    """The smoke test of the real thing: `mdfts serve` starts Datasette with the plugin, on
    127.0.0.1, with arbitrary SQL and downloads off."""
    assert server.startswith("http://127.0.0.1:")
    rows = get_json(f"{server}/{DB_NAME}/search.json?q=payments+rollback&_shape=array")
    assert (rows[0]["path"], rows[0]["heading"]) == ("runbooks/payments.md", "Rollback procedure")
    assert get(f"{server}/{DB_NAME}.json?sql=select+1")[0] == 403
    assert get(f"{server}/{DB_NAME}.db")[0] == 403
    status, page = get(f"{server}/{DB_NAME}/sections?_search=exporter")
    assert status == 200 and 'class="mdfts-source"' in page


@pytest.mark.integration
def test_a_query_error_is_one_short_line_in_the_log(index_db: Path, tmp_path: Path) -> None:
    # Datasette writes a failed query's whole SQL to stderr: 70 KB of search.sql for `limit=abc`.
    log = tmp_path / "serve.log"
    with mdfts_serve(index_db, log=log) as (base, _):
        status, page = get(f"{base}/{DB_NAME}/search?q=payments&limit=abc")
    assert status == 400 and '<p class="message-error">datatype mismatch</p>' in page
    errors = [line for line in log.read_text().splitlines() if not line.startswith("INFO:")]
    assert errors == [f"ERROR: {DB_NAME}: query search: datatype mismatch "
                      "(params: {'q': 'payments', 'limit': 'abc', 'explain': '', 'prefix': ''})"]


# --- rendered sections and source links ---------------------------------------------------

def test_section_markdown_is_rendered_and_raw_html_escaped(site: InProcessDatasette) -> None:
    status, page = site.get(f"/{DB_NAME}/search?q=E2001")
    assert status == 200
    assert '<div class="mdfts-body"><h2>E2001</h2>' in page
    assert "&lt;script&gt;alert" in page and '<script>alert("not run")' not in page


def test_a_search_card_marks_a_hit_without_the_named_identifier(site: InProcessDatasette) -> None:
    # As `mdfts search`, MCP and llm do (search.sql's `exact`): an absent name must not pass for a hit.
    rows = site.get_json(f"/{DB_NAME}/search.json?q=E2001+rollback&_shape=array")
    status, page = site.get(f"/{DB_NAME}/search?q=E2001+rollback")
    assert status == 200
    cards = page.split('<article class="mdfts-card">')[1:]
    assert len(cards) == len(rows) == 4
    assert [r["exact"] for r in rows] == [1, 1, 0, 0]
    assert ["(no exact match)" in card for card in cards] == [False, False, True, True]
    _, token_page = site.get(f"/{DB_NAME}/token?token=e2001")  # a token's `exact` is its case: not marked
    assert "mdfts-card" in token_page and "no exact match" not in token_page


def test_the_view_with_every_column_is_searchable_too(site: InProcessDatasette) -> None:
    # sections_full is a view: searched by rowid (Datasette's default) it would match nothing.
    full = site.get_json(f"/{DB_NAME}/sections_full.json?_search=rollback&_shape=array&_col=id")
    table = site.get_json(f"/{DB_NAME}/sections.json?_search=rollback&_shape=array&_col=id")
    assert full and [r["id"] for r in full] == [r["id"] for r in table]


@pytest.mark.parametrize("pk", ["~31", "1e0", "1,2"], ids=["tilde-encoded", "exponent", "two-values"])
def test_any_url_of_a_section_row_is_a_page_not_a_server_error(site: InProcessDatasette, pk: str) -> None:
    # Datasette finds section 1 for each of these (it tilde-decodes, SQLite compares `id = '1e0'`
    # as a number); the row page must not fall into the table layout, which needs table context.
    _, plain = site.get(f"/{DB_NAME}/sections/1")
    status, page = site.get(f"/{DB_NAME}/sections/{pk}")
    assert status == 200, page[:300]
    heading = re.search(r"<title>(.*?)</title>", plain, re.S)
    assert heading is not None
    if pk == "~31":  # the same section page as /sections/1
        assert '<article class="mdfts-section">' in page
        assert heading.group(1) in page


@pytest.mark.parametrize("table", ["documents", "token_rows", "sections"])
def test_a_damaged_index_shows_the_plugins_error_page(
        tmp_path: Path, index_db: Path, datasette_client: Callable[..., InProcessDatasette], table: str) -> None:
    # A page of the file garbled (a bad copy, a disk error) where the section page reads: the
    # stored section query (documents), Datasette's count of the rows that link to the section
    # (token_rows), Datasette's own read of the row (sections). Each was a bare 500, "Error 500"
    # over sqlite3's "database disk image is malformed".
    db = tmp_path / f"{DB_NAME}.db"
    shutil.copy(index_db, db)
    with sqlite3.connect(db) as conn:
        page = conn.execute("select rootpage from sqlite_master where name = ?", (table,)).fetchone()[0]
        size = conn.execute("pragma page_size").fetchone()[0]
    conn.close()
    (row,) = datasette_client(index_db).get_json(f"/{DB_NAME}/sections.json?heading=Rollback+procedure&_shape=array")
    with db.open("r+b") as f:
        f.seek((page - 1) * size)
        f.write(b"\xff" * size)
    status, body = datasette_client(db).get(f"/{DB_NAME}/sections/{row['id']}")
    said = re.search(r'<p class="mdfts-error">(.*?)</p>', body, re.S)
    assert (status, said and said.group(1)) == (500, f"{DB_NAME}.db: damaged or truncated index file (database "
                                                     "disk image is malformed); build or copy it again")
    assert "<h1>This index cannot be read</h1>" in body and 'action="/ops-docs/search"' in body
    assert str(tmp_path) not in body  # the server's folders are none of a visitor's business


def test_a_section_page_has_one_h1_naming_the_section(
        tmp_path: Path, datasette_client: Callable[..., InProcessDatasette]) -> None:
    # The body's own heading was the page's only heading, at its level: a level-2 section's page
    # had no h1, a lead text's none at all, and a level-1 one two (its body in the folded table
    # of every column too).
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kiln.md").write_text("Lead text before any heading.\n\n# Kiln\n\nHot.\n\n## Cool `down`\n\n"
                                  "> # A quoted heading\n\nSlowly.\n\n### Fire\n\nHotter.\n")
    db = tmp_path / "kiln.db"
    build_index([docs], db)
    site = datasette_client(db)
    for row in site.get_json("/kiln/sections.json?_shape=array&_col=heading"):
        status, page = site.get(f"/kiln/sections/{row['id']}")
        h1s = re.findall(r"<h1[^>]*>(.*?)</h1>", page, re.S)
        names = {"": 'kiln.md', "Cool down": "Cool <code>down</code>"}
        assert (status, h1s) == (200, [names.get(row["heading"], row["heading"])]), row
    # A heading in a quote starts a section, whose body starts with the quote: the page names it
    # in an h1 of its own, and the quote keeps its heading, under it.
    quoted = site.get_json("/kiln/sections.json?heading=A+quoted+heading&_shape=array")[0]["id"]
    _, page = site.get(f"/kiln/sections/{quoted}")
    assert '<h1 class="mdfts-h1">A quoted heading</h1>' in page and "<h2>A quoted heading</h2>" in page
    _, table = site.get("/kiln/sections")  # the table's rows: no h1 but the page's own
    assert re.findall(r"<h1[^>]*>(.*?)</h1>", table, re.S) == ["sections"]


def test_a_section_page_starts_with_its_h1(tmp_path: Path, datasette_client: Callable[..., InProcessDatasette]) -> None:
    # The source and level line came before the h1, and a note on tables too large to draw before
    # the heading too: a screen reader's first words on the page were "kiln.md:3-5 · level 1".
    docs = tmp_path / "docs"
    docs.mkdir()
    bomb = "|a" * 200 + "|\n" + "|-" * 200 + "|\n" + "x\n" * 200
    (docs / "kiln.md").write_text(f"Lead text.\n\n# Kiln\n\nHot.\n\n## Cool `down`\n\nSlowly.\n\n## Bomb\n\n{bomb}")
    db = tmp_path / "kiln.db"
    build_index([docs], db)
    site = datasette_client(db)
    for row in site.get_json("/kiln/sections.json?_shape=array&_col=heading"):
        status, page = site.get(f"/kiln/sections/{row['id']}")
        article = page[page.index('<article class="mdfts-section">'):]
        first = re.search(r"<(?!article|div)(\w+)[ >]", article[len('<article class="mdfts-section">'):])
        assert status == 200 and first and first.group(1) == "h1", (row, article[:300])
        assert article.index("</h1>") < article.index('class="mdfts-meta"'), row
    _, bomb_page = site.get("/kiln/sections.json?heading=Bomb&_shape=array")
    assert "Tables in this section are too large to draw" in site.get(f"/kiln/sections/{json.loads(bomb_page)[0]['id']}")[1]


@pytest.mark.parametrize(("count", "summary"), [
    (40, None),
    (41, "Show all 41 exact tokens"),
    (520, "Show the first 500 exact tokens"),
], ids=["forty", "forty-one", "more-than-listed"])
def test_a_section_page_folds_its_exact_tokens_past_forty(
        tmp_path: Path, datasette_client: Callable[..., InProcessDatasette], count: int, summary: str | None) -> None:
    # Up to 500 chips, all open: a reference table of settings was screens of chips before the
    # page's links and its every column.
    docs = tmp_path / "docs"
    docs.mkdir()
    names = [f"SETTING_{i:03}" for i in range(count)]
    (docs / "settings.md").write_text("# Settings\n\n" + "".join(f"- `{n}`\n" for n in names))
    build_index([docs], tmp_path / "settings.db")
    site = datasette_client(tmp_path / "settings.db")
    status, page = site.get("/settings/sections/1")
    assert status == 200
    chips = re.findall(r"<code>(SETTING_\d+)</code></a>", page[page.index("Exact tokens here"):])
    listed = min(count, 500)
    assert chips == names[:listed]
    folds = re.findall(r'<details class="mdfts-more-tokens">\s*<summary>(.*?)</summary>(.*?)</details>', page, re.S)
    if summary is None:
        assert folds == []
        return
    assert [(text, re.findall(r"<code>(SETTING_\d+)</code>", inside)) for text, inside in folds] == [
        (summary, names[40:listed])]  # the first 40 stay in view
    if count > 500:  # the page lists 500: the tokens table has the rest
        assert '<a href="/settings/tokens?section_id=1">every one in the tokens table</a>' in page


def test_tokens_page_labels_each_section_by_its_heading(site: InProcessDatasette) -> None:
    # tokens is a view (schema 4): no foreign key for Datasette to label, so the plugin does.
    _, page = site.get(f"/{DB_NAME}/tokens?norm=e2001")
    rows = site.get_json(f"/{DB_NAME}/tokens.json?norm=e2001&_shape=array")
    assert rows
    for r in rows:
        heading = site.get_json(f"/{DB_NAME}/sections/{r['section_id']}.json?_shape=array")[0]["heading"]
        assert (f'<a href="/{DB_NAME}/sections/{r["section_id"]}">{heading}</a>&nbsp;<em>{r["section_id"]}</em>'
                in page)


def test_each_section_links_to_its_source_lines(site: InProcessDatasette) -> None:
    _, page = site.get(f"/{DB_NAME}/sections?_search=exporter")
    assert ('<a class="mdfts-source" href="https://example.com/ops/blob/HEAD/runbooks/billing.md#L5-L9" '
            'title="source, lines 5–9">runbooks/billing.md</a>') in page


def test_relative_links_in_a_section_open_on_these_pages(
        tmp_path: Path, datasette_client: Callable[..., InProcessDatasette]) -> None:
    """The docs link relative to their file; the page is /db/sections/ID, where such a link led
    to a 404. A markdown target opens as the section (by its anchor) or its outline, another
    file as its source, and a target outside the docs or on a site these pages do not know is
    text; an absolute URL is kept."""
    docs = tmp_path / "docs"
    (docs / "runbooks").mkdir(parents=True)
    (docs / "sops").mkdir()
    (docs / "runbooks" / "kiln.md").write_text(
        "# Kiln\n\n## Cool down\n\nSee [the SOP](../sops/hotfix.md#when-to-hotfix), [its outline](../sops/hotfix.md), "
        "[the script](scripts/cool.sh), [a site page](/manual/x.html), [outside](../../etc/x.md), "
        "[above](#kiln) and [the maker](https://example.com/kilns).\n")
    (docs / "sops" / "hotfix.md").write_text("# Hotfix\n\n## When to hotfix\n\nOnly when the kiln cracks.\n")
    db = tmp_path / "links.db"
    build_index([docs], db, source_url=SOURCE_URL)
    site = datasette_client(db)
    (row,) = site.get_json("/links/sections.json?heading=Cool+down&_shape=array")
    status, page = site.get(f"/links/sections/{row['id']}")
    assert status == 200
    hrefs = dict((text, href.replace("&amp;", "&")) for href, text in re.findall(r'<a href="([^"]*)">([^<]*)</a>', page))
    assert hrefs["the SOP"] == "/links/-/mdfts-section?path=sops%2Fhotfix.md&anchor=when-to-hotfix"
    assert hrefs["its outline"] == "/links/outline?path=sops%2Fhotfix.md"
    assert hrefs["the script"] == "https://example.com/ops/blob/HEAD/runbooks/scripts/cool.sh#L1-L1"
    assert hrefs["above"] == "/links/-/mdfts-section?path=runbooks%2Fkiln.md&anchor=kiln"
    assert hrefs["the maker"] == "https://example.com/kilns"
    assert "<span>a site page</span>" in page and "<span>outside</span>" in page
    # A heading's link opens that section's page (it opened the `section` query's list of cards).
    ids = {r["heading"]: r["id"] for r in site.get_json("/links/sections.json?_shape=array&_col=heading")}
    assert site.location(hrefs["the SOP"]) == (302, f"/links/sections/{ids['When to hotfix']}")
    assert site.location(hrefs["above"]) == (302, f"/links/sections/{ids['Kiln']}")
    status, target = site.get(f"/links/sections/{ids['When to hotfix']}")
    assert status == 200 and '<article class="mdfts-section">' in target and "Only when the kiln cracks." in target
    status, outline = site.get(hrefs["its outline"])
    assert status == 200 and "When to hotfix" in outline
    # An anchor the document does not have: the plugin's page, naming the nearest anchors.
    status, missing = site.get("/links/-/mdfts-section?path=sops%2Fhotfix.md&anchor=when-to-hotfx")
    assert status == 404 and "<h1>Section not found</h1>" in missing
    assert "nearest anchors in sops/hotfix.md: #when-to-hotfix" in missing and 'action="/links/search"' in missing


@pytest.mark.parametrize("denied", [
    {"allow": {"id": "reader"}},
    {"databases": {DB_NAME: {"allow": {"id": "reader"}}}},
    {"databases": {DB_NAME: {"tables": {"sections": {"allow": {"id": "reader"}}}}}},
], ids=["instance", "database", "table"])
def test_a_heading_link_is_refused_where_the_section_page_is(
        index_db: Path, datasette_client: Callable[..., InProcessDatasette], denied: dict[str, Any]) -> None:
    # The redirect names the section a path and anchor find (its id): an actor who may not view
    # the sections table, its database or the instance is refused, as on the section page itself,
    # and never learns where it would go.
    site = datasette_client(index_db, metadata=denied)
    link = f"/{DB_NAME}/-/mdfts-section?path=runbooks%2Fpayments.md&anchor=rollback-procedure"
    reader = {"id": "reader"}
    status, target = site.location(link, actor=reader)
    assert status == 302 and target is not None and site.get(target, actor=reader)[0] == 200
    for actor in (None, {"id": "someone-else"}):
        assert site.get(target, actor=actor)[0] == 403  # the section page
        assert site.location(link, actor=actor) == (403, None)
        status, page = site.get(link, actor=actor)
        assert status == 403 and target not in page
        assert page.count("You do not have permission to view this table") == 1  # (it said "view-database")
    assert site.location(f"/{DB_NAME}/-/mdfts-section?path=nowhere.md&anchor=x") == (403, None)  # not a 404


@contextmanager
def _served_links(tmp_path: Path, body: str) -> Iterator[tuple[str, dict[str, str]]]:
    """`mdfts serve` of docs whose runbooks/kiln.md has `body` and whose sops/hotfix.md has a
    section "When to hotfix" and one "Café crème": (base URL, the links in the kiln section's body,
    by their text)."""
    docs = tmp_path / "docs"
    (docs / "runbooks").mkdir(parents=True)
    (docs / "sops").mkdir()
    (docs / "runbooks" / "kiln.md").write_text(f"# Kiln\n\n## Cool down\n\n{body}\n", encoding="utf-8")
    (docs / "sops" / "hotfix.md").write_text(
        "# Hotfix\n\n## When to hotfix\n\nOnly when the kiln cracks.\n\n## Café crème\n\nWhile it cools.\n",
        encoding="utf-8")
    db = tmp_path / "links.db"
    build_index([docs], db, source_url=SOURCE_URL)
    with mdfts_serve(db) as (base, _):
        (row,) = get_json(f"{base}/links/sections.json?heading=Cool+down&_shape=array")
        status, page = get(f"{base}/links/sections/{row['id']}")
        assert status == 200
        body = page[page.index('<div class="mdfts-body">'):]
        body = body[:body.index("</div>")]
        hrefs = {text: href.replace("&amp;", "&") for href, text in re.findall(r'<a href="([^"]*)">([^<]*)</a>', body)}
        yield base, hrefs


def test_a_link_to_a_heading_with_accents_opens_that_section(tmp_path: Path) -> None:
    """markdown-it percent-encodes a link's target; the anchor went on encoded, so the section
    query looked for caf%c3%a9-cr%c3%a8me and found nothing."""
    with _served_links(tmp_path, "See [the crème](../sops/hotfix.md#café-crème).") as (base, hrefs):
        assert hrefs["the crème"] == "/links/-/mdfts-section?path=sops%2Fhotfix.md&anchor=caf%C3%A9-cr%C3%A8me"
        status, target = get(base + hrefs["the crème"])  # (urllib follows the redirect)
        assert status == 200 and '<article class="mdfts-section">' in target and "While it cools." in target


def test_a_link_whose_target_decodes_to_an_absolute_path_is_text(tmp_path: Path) -> None:
    """`/` is refused as a site path, but its percent-encoded form `%2F` was decoded after that
    test: `%2Fetc%2Fx.md` opened the outline of /etc/x.md, `%2F%2Fhost%2Fx.sh` the source at
    .../HEAD///host/x.sh. No file in the docs has such a path; they are text, as /x is."""
    body = "[a](%2Fetc%2Fx.md), [b](%2F%2Fhost.example%2Fx.sh), [c](..%2F..%2Fx.md) and [d](../sops/hotfix.md)."
    with _served_links(tmp_path, body) as (_, hrefs):
        assert hrefs == {"d": "/links/outline?path=sops%2Fhotfix.md"}


def test_source_link_fills_commit_and_quotes_the_path() -> None:
    meta = {"source_url": SOURCE_URL, "git_commit": "0123abc"}
    row = {"path": "ops notes/a#b.md", "start_line": 3, "end_line": 9}
    assert source_link(meta, row) == "https://example.com/ops/blob/0123abc/ops%20notes/a%23b.md#L3-L9"
    assert source_link(meta, {"path": "a.md"}) is None
    assert source_link({}, row) is None


@pytest.mark.parametrize(
    ("template", "error"),
    [
        ("https://x/{line}", "--source-url: unknown field {line}; use {path}, {start_line}, {end_line}, "
                             "{commit}, {anchor}"),
        ("x/{path}", "--source-url 'x/{path}': must start with http:// or https://"),
        ("https://x/{path", "--source-url 'https://x/{path': expected '}' before end of string"),
    ],
    ids=["unknown-field", "not-http", "unclosed"],
)
def test_bad_source_url_fails_the_build_cleanly(tmp_path: Path, template: str, error: str) -> None:
    out = tmp_path / "x.db"
    result = CliRunner().invoke(cli, ["build", str(FIXTURE_DOCS), "-o", str(out), "--source-url", template])
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {error}\n")
    assert not out.exists()
    with pytest.raises(MdftsError):
        check_source_url(template)


def test_build_stores_the_source_url(index_db: Path) -> None:
    with sqlite3.connect(index_db) as db:
        assert db.execute("select value from mdfts_meta where key = 'source_url'").fetchone() == (SOURCE_URL,)


# --- generated settings -------------------------------------------------------------------

def test_column_descriptions_come_from_schema_comments() -> None:
    sql = ("create table t (\n  id integer primary key,\n  path text not null,   -- where it is\n"
           "  -- said on the line before\n  body text,\n  env_vars text not null\n)")
    assert column_descriptions(sql) == {
        "id": "Row id; stable only within one build",
        "path": "Where it is",
        "body": "Said on the line before",
        "env_vars": "JSON array of the section's exact tokens of kind env_var",
    }


def test_a_comment_continued_under_itself_stays_with_its_column(index_db: Path) -> None:
    # schema.sql's `body` comment runs on to a second line, aligned under the first: that line
    # is the rest of body's description, not the description of `chars` after it.
    sql = ("create table t (\n  body text,   -- the first half;\n"
           "               --   the second half\n  chars integer,\n  -- own line\n  size integer\n)")
    assert column_descriptions(sql) == {"body": "The first half; the second half", "size": "Own line"}
    with sqlite3.connect(index_db) as db:
        (schema,) = db.execute("select sql from sqlite_master where name = 'sections'").fetchone()
    described = column_descriptions(schema)
    assert described["body"].endswith("; HTML comments in its HTML blocks left out, their line breaks kept")
    assert "chars" not in described


def _stored_sql(db_path: Path) -> dict[str, str]:
    with sqlite3.connect(db_path) as db:
        return dict(db.execute("select name, sql from mdfts_queries"))


def test_datasette_metadata_prints_0_65_metadata(index_db: Path) -> None:
    result = CliRunner().invoke(cli, ["datasette-metadata", str(index_db)])
    assert result.exit_code == 0, result.output
    db = json.loads(result.stdout)["databases"][DB_NAME]
    stored = _stored_sql(index_db)
    assert {name: q["sql"] for name, q in db["queries"].items()} == {
        name: sql for name, sql in stored.items() if name != "documents"}
    assert db["queries"]["search"]["params"] == ["q", "limit", "explain", "prefix"]
    assert db["queries"]["search"]["title"] == "Search the docs"
    sections = db["tables"]["sections"]
    assert (sections["fts_table"], sections["fts_pk"]) == ("sections_fts", "id")
    assert sections["columns"]["start_line"] == "1-based, inclusive, the heading's own line"
    assert db["tables"]["term_df"] == {"hidden": True}


def test_datasette_metadata_config_prints_1_0_yaml(index_db: Path) -> None:
    result = CliRunner().invoke(cli, ["datasette-metadata", str(index_db), "--config"])
    assert result.exit_code == 0, result.output
    config = yaml.safe_load(result.stdout)
    assert config["allow_sql"] is False
    assert config["settings"] == {"sql_time_limit_ms": 1000, "allow_download": False,
                                  "allow_csv_stream": False, "suggest_facets": False}
    db = config["databases"][DB_NAME]
    assert db["queries"]["search"]["sql"] == _stored_sql(index_db)["search"]
    assert db["tables"]["sections"]["facets"][2] == {"array": "env_vars"}
    assert "columns" not in db["tables"]["sections"]  # descriptions are metadata, not config, in 1.0


def test_metadata_and_serve_refuse_files_that_are_not_indexes(tmp_path: Path, index_db: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x)").connection.close()
    twin = tmp_path / f"{DB_NAME}.db"
    shutil.copy(index_db, twin)
    cases = [
        (["datasette-metadata", str(other)],
         f"Error: {other}: not an mdfts index (application_id 0); build one with mdfts build\n"),
        (["serve", str(tmp_path / "missing.db")], f"Error: {tmp_path / 'missing.db'}: no such index file\n"),
        (["serve", str(index_db), str(twin)],
         f"Error: {twin}: same database name '{DB_NAME}' as {index_db}; rename one\n"),
    ]
    for args, error in cases:
        result = CliRunner().invoke(cli, args)
        assert (result.exit_code, result.stderr) == (1, error), args

# The pages in a real browser: tests/test_datasette_browser.py.
