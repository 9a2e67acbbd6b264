"""Issue #16, server side: no page or query of `mdfts serve` can hold a worker or the machine,
whatever the docs hold or (with --allow-sql) a visitor asks. Real servers on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("datasette", reason="Datasette is not installed: pip install -e '.[datasette]'")
pytestmark = pytest.mark.integration

from dsserve import mdfts_serve  # noqa: E402

from mdfts.browse import SERVE_MEMORY_BYTES  # noqa: E402
from mdfts.build import build_index  # noqa: E402

# Small cousins of the reproductions in #16: a table bomb (3 tables of 100 columns over 100
# one-cell rows: 30,000 cells from 31 KB) and 400 KB of unclosed `[a](` (quadratic to parse).
TABLE = "|a" * 100 + "|\n" + "|-" * 100 + "|\n" + "x\n" * 100 + "\n"
HOSTILE_DOCS = {
    "bomb.md": "# Bomb\n\n" + TABLE * 3,
    "links.md": "# Links\n\n" + "[a](" * 100_000 + "\n",
    "plain.md": "# Plain\n\nA short section about rollback.\n",
}


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("hostile-docs")
    for name, text in HOSTILE_DOCS.items():
        (docs / name).write_text(text)
    out = tmp_path_factory.mktemp("hostile-index") / "hostile.db"
    build_index([docs], out)
    return out


@pytest.fixture(scope="module")
def server(hostile_db: Path) -> Any:
    with mdfts_serve(hostile_db) as (base, proc):
        yield base, proc


def _section_id(base: str, heading: str) -> int:
    status, body = get(f"{base}/hostile/sections.json?heading={heading}&_shape=array&_col=id")
    assert status == 200, body[:300]
    return int(json.loads(body)[0]["id"])


@pytest.mark.parametrize("heading", ["Bomb", "Links"])
def test_hostile_sections_render_small(server: tuple[str, Any], heading: str) -> None:
    # Today: the bomb's page carries every one of its 30,000 cells, the links page all 400 KB
    # rendered, each on the event loop.
    base, _ = server
    section = _section_id(base, heading)
    for page in (f"/hostile/sections/{section}", f"/hostile/search?q={heading.lower()}",
                 f"/hostile/sections?heading={heading}"):
        status, body = get(base + page)
        assert status == 200, page
        assert len(body) < 150_000, (page, len(body))
        assert b"<td>x</td>" not in body


def test_markdown_is_rendered_off_the_event_loop(hostile_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datasette.app import Datasette

    import mdfts.datasette_plugin as plugin

    threads: list[int] = []
    real = plugin.render_section

    def spy(body: str, limit: int, rewrite_link: Callable[[str], str | None] | None = None,
            title: bool = False) -> str:
        threads.append(threading.get_ident())
        return real(body, limit, rewrite_link, title)

    monkeypatch.setattr(plugin, "render_section", spy)

    async def pages() -> tuple[int, list[int]]:
        ds = Datasette(immutables=[str(hostile_db)])
        await ds.invoke_startup()
        statuses = [(await ds.client.get(url)).status_code
                    for url in ("/hostile/sections", "/hostile/sections/1", "/hostile/search?q=rollback")]
        return threading.get_ident(), statuses

    loop_thread, statuses = asyncio.run(pages())
    assert statuses == [200, 200, 200]
    assert len(threads) >= 3 and loop_thread not in threads


def test_a_section_page_is_read_by_the_read_layer_in_datasettes_sql_thread(
        hostile_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The page's reads go through mdfts.lookup on Datasette's own connection (no second one),
    # off the event loop, and within Datasette's SQL time limit.
    from datasette.app import Datasette

    import mdfts.lookup as lookup

    calls: list[tuple[int, Any]] = []
    real = lookup.section_page

    def spy(ix: Any, section_id: int, max_children: int = 200) -> Any:
        calls.append((threading.get_ident(), ix))
        if section_id == 2:  # a read that would run for many seconds unbounded
            ix.conn.execute("with recursive n(i) as (select 1 union all select i + 1 from n "
                            "where i < 200000000) select count(*) from n").fetchone()
        return real(ix, section_id, max_children)

    monkeypatch.setattr(lookup, "section_page", spy)

    async def pages() -> tuple[int, list[int], list[bool]]:
        ds = Datasette(immutables=[str(hostile_db)], settings={"sql_time_limit_ms": 50})
        await ds.invoke_startup()
        responses = [await ds.client.get(url) for url in ("/hostile/sections/1", "/hostile/sections/2")]
        open_after = [ix.conn.execute("select 1").fetchone()[0] == 1 for _, ix in calls]
        assert "SQL Interrupted" in responses[1].text
        return threading.get_ident(), [r.status_code for r in responses], open_after

    loop_thread, statuses, open_after = asyncio.run(pages())
    assert statuses == [200, 400]  # the runaway read was interrupted, as Datasette's own
    assert [type(ix).__name__ for _, ix in calls] == ["Index", "Index"]
    assert loop_thread not in {thread for thread, _ in calls}
    assert open_after == [True, True]  # Datasette's connections stay open for its next request


# Runs for many seconds unless stopped; it reads :id, as the stored `section` query does.
RUNAWAY_SECTION_SQL = ("with recursive n(i) as (select 1 union all select i + 1 from n where i < 200000000) "
                       "select count(*) as n from n where :id is not null")


def test_the_section_query_stopped_at_the_time_limit_is_the_plugins_page(
        hostile_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The stored `section` query runs through the read layer, which makes SQLite's "interrupted"
    # a QueryError: on the section page and the heading-link redirect that was Datasette's bare
    # 500, where a runaway read elsewhere on the page is its "SQL Interrupted" 400.
    from datasette.app import Datasette

    import mdfts.index
    from mdfts.artifact import StoredQuery

    real = mdfts.index.run_query
    links_id = 2  # links.md's section, which the redirect below names

    def runaway(db: Any, query: StoredQuery, params: dict[str, Any]) -> Any:
        if query.name == "section" and params.get("id") == links_id:
            query = StoredQuery(query.name, query.title, query.description, query.params, RUNAWAY_SECTION_SQL)
        return real(db, query, params)

    monkeypatch.setattr(mdfts.index, "run_query", runaway)

    async def pages() -> list[tuple[int, str]]:
        ds = Datasette(immutables=[str(hostile_db)], settings={"sql_time_limit_ms": 50})
        await ds.invoke_startup()
        assert (await ds.client.get("/hostile/sections.json?_shape=array&_col=path&id=2")).json()[0]["path"] \
            == "links.md"
        responses = [await ds.client.get(url) for url in (
            f"/hostile/sections/{links_id}", "/hostile/-/mdfts-section?path=links.md&anchor=links",
            "/hostile/sections/3")]
        return [(r.status_code, r.text) for r in responses]

    (page, page_text), (link, link_text), (other, _) = asyncio.run(pages())
    for status, text in ((page, page_text), (link, link_text)):
        assert status == 400, text[:500]
        assert "<h1>SQL Interrupted</h1>" in text
        message = re.search(r'<p class="mdfts-error">(.*?)</p>', text, re.S)
        assert message and message.group(1) == ("Reading this section took longer than the SQL time limit "
                                                "(the sql_time_limit_ms setting).")
        assert 'action="/hostile/search"' in text and '<a href="/hostile">' in text  # the way on
    assert other == 200  # another section, on the same connections


def test_table_pages_suggest_no_facets(datasette_client: Any, hostile_db: Path) -> None:
    # Today every table page also runs a query per column to suggest facets.
    ds = datasette_client(hostile_db)
    for table in ("sections", "tokens", "documents"):
        assert ds.get_json(f"/hostile/{table}.json?_size=1")["suggested_facets"] == [], table


def test_no_csv_streaming_unless_downloads_are_allowed(datasette_client: Any, hostile_db: Path) -> None:
    # Today `?_stream=on` streams every row of any table although the file cannot be downloaded.
    status, body = datasette_client(hostile_db).get("/hostile/sections.csv?_stream=on")
    assert status == 400 and "CSV streaming is disabled" in body
    assert datasette_client(hostile_db).get("/hostile/sections.csv?_col=heading")[0] == 200  # one page still
    status, body = datasette_client(hostile_db, allow_download=True).get(
        "/hostile/sections.csv?_stream=on&_col=heading")
    assert status == 200 and body.splitlines()[1:] == ["1,Bomb", "2,Links", "3,Plain"]


def test_allow_sql_cannot_build_huge_values(datasette_client: Any, hostile_db: Path) -> None:
    # Today this runs 5 s (past the 1 s limit: it is one function call) and takes 0.9 GB.
    ds = datasette_client(hostile_db, allow_sql=True)
    for sql in ("select length(randomblob(900000000))", "select zeroblob(900000000)",
                "with recursive n(i, s) as (select 1, 'x' union all select i + 1, s || s from n "
                "where i < 40) select length(max(s)) from n"):
        status, body = ds.get("/hostile.json?" + urllib.parse.urlencode({"sql": sql}))
        assert status == 400, sql
        assert json.loads(body)["error"] == "string or blob too big", sql
    # Everything stored stays readable, the longest section too.
    rows = ds.get_json("/hostile.json?_shape=array&sql=select+max(length(body))+as+n+from+sections")
    assert rows == [{"n": len(HOSTILE_DOCS["links.md"]) - 1}]


def test_allow_sql_is_stopped_at_the_time_limit(hostile_db: Path) -> None:
    with mdfts_serve(hostile_db, "--allow-sql", "--time-limit-ms", "200") as (base, _):
        sql = "with recursive c(x) as (select 1 union all select x + 1 from c) select count(*) from c"
        status, body = get(f"{base}/hostile.json?" + urllib.parse.urlencode({"sql": sql}))
        assert status == 400 and json.loads(body)["title"] == "SQL Interrupted"


def test_serve_caps_its_address_space(server: tuple[str, Any]) -> None:
    # Today unbounded: many large rows (--allow-sql) could take all the machine's memory.
    _, proc = server
    limits = Path(f"/proc/{proc.pid}/limits").read_text()
    line = next(x for x in limits.splitlines() if x.startswith("Max address space"))
    assert line.split()[3:5] == [str(SERVE_MEMORY_BYTES), str(SERVE_MEMORY_BYTES)]



def test_long_sql_in_mdfts_queries_is_shown_whole(datasette_client: Any, hostile_db: Path) -> None:
    # Only section columns are cut on the page; the shipped queries' SQL stays readable in full.
    status, page = datasette_client(hostile_db).get("/hostile/mdfts_queries/search")
    assert status == 200
    assert "characters)</span>" not in page and "order by" in page.split("col-sql")[-1]


def test_a_section_page_lists_a_bounded_number_of_children(datasette_client: Any, tmp_path: Path) -> None:
    # Today every child is listed, and the neighbours query behind it reads every child's body:
    # 50,000 sections under one h1 made a 2.5 MB page.
    docs = tmp_path / "wide"
    docs.mkdir()
    (docs / "top.md").write_text("# Top\n\nintro\n\n" + "".join(f"## h{i}\n\ntext {i}\n\n" for i in range(500)))
    build_index([docs], tmp_path / "wide.db")
    status, page = datasette_client(tmp_path / "wide.db").get("/wide/sections/1")
    assert status == 200
    children = page.split('<ul class="mdfts-children">')[1].split("</ul>")[0]
    assert children.count("<li>") == 200 and ">h199</a>" in children and ">h200</a>" not in children
    assert "The first 200 are listed; the <a href=\"/wide/outline?path=top.md\">outline of the file</a>" in page


def test_long_headings_and_tokens_are_cut_wherever_a_page_names_them(datasette_client: Any, tmp_path: Path) -> None:
    # Markdown allows a heading or an identifier of any length, and a page repeated each in full
    # wherever it named the section: 200 children with 100 KB headings made the parent's page
    # 20 MB, 500 tokens of 40 KB a 39 MB one (each token twice: link and text).
    long = "h" * 10_000
    docs = tmp_path / "long"
    docs.mkdir()
    tokens = " ".join(f"LONG_{i}_" + "AB_" * 3_000 + "C" for i in range(20))
    children = "".join(f"## {i} {long}\n\nrollback {i}\n\n" for i in range(20))
    (docs / "top.md").write_text(f"# Top {long}\n\nrollback {tokens}\n\n{children}")
    build_index([docs], tmp_path / "long.db")
    ds = datasette_client(tmp_path / "long.db")
    child = ds.get_json("/long/sections.json?_shape=array&_col=id&level=2&_size=1")[0]["id"]
    pages = ["/long/sections/1", f"/long/sections/{child}", "/long/search?q=rollback", "/long/sections",
             "/long/sections?_facet_array=env_vars", "/long/tokens", "/long/outline?path=top.md",
             "/long/token?token=LONG_1_AB_AB", f"/long/neighbors?id={child}"]
    sizes = {}
    for page in pages:
        status, body = ds.get(page)
        assert status == 200, page
        sizes[page] = len(body)
    # The rendered markdown holds a heading (a section page's first 20,000 characters, a card's
    # first 2,000); every list, crumb, link and cell that names a section or token is cut.
    assert max(sizes.values()) < 100_000, sizes
