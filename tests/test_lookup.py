"""The typed read API (mdfts.lookup through Index): Hit records, references in every printed form,
outlines, token kinds, stored queries, numbers as numbers, and source URLs."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import mdfts
from mdfts.build import build_index
from mdfts.refs import RefError, parse_ref

from conftest import FIXTURE_DOCS, run_cli

REF = "services/payments.md#rollback-procedure"


@pytest.fixture(scope="module")
def ix(fixture_db: Path) -> Iterator[mdfts.Index]:
    with mdfts.open_index(fixture_db) as index:
        yield index


@pytest.fixture(scope="module")
def linked_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("linked") / "linked.db"
    build_index([FIXTURE_DOCS], out, source_url="https://git.example/docs/blob/{commit}/{path}#L{start_line}-L{end_line}")
    return out


def test_search_gives_typed_records_with_every_field(ix: mdfts.Index) -> None:
    [hit, *_] = ix.search("payments rollback", limit=3)
    assert isinstance(hit, mdfts.Hit)
    assert (hit.ref, hit.path, hit.heading, hit.trail, hit.anchor, hit.level, hit.start_line, hit.end_line) == (
        REF, "services/payments.md", "Rollback procedure", ("payments", "Rollback procedure"),
        "rollback-procedure", 2, 10, 18)
    assert hit.rank == 1 and isinstance(hit.score, float) and hit.body.startswith("## Rollback procedure\n")
    assert hit.url is None and hit.lines == "services/payments.md:10-18" and hit.title == "payments › Rollback procedure"
    assert hit["content"] == hit.body and hit["trail"] == ["payments", "Rollback procedure"]  # dict-style too


def test_explain_is_accepted_and_says_what_it_has(ix: mdfts.Index) -> None:
    plain = ix.search("payments rollback", limit=3)
    explained = ix.search("payments rollback", limit=3, explain=True)
    assert [h.id for h in explained] == [h.id for h in plain]
    assert all(h.explain is not None and h.explain.get("score", h.score) == h.score for h in explained)
    assert all(h.explain is None for h in plain)


def test_path_prefix_keeps_one_folder(ix: mdfts.Index) -> None:
    hits = ix.search("payments", limit=5, path_prefix="services/")
    assert hits and all(h.path.startswith("services/") for h in hits)
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_context_keeps_to_a_path_prefix(ix: mdfts.Index, fixture_db: Path) -> None:
    worker = "services/payments-worker.md"
    assert {b.hit.path for b in ix.context("payments rollback", max_tokens=4000).blocks} > {worker}
    for ctx in (ix.context("payments rollback", max_tokens=4000, path_prefix=worker),
                mdfts.context(fixture_db, "payments rollback", max_tokens=4000, path_prefix=worker)):
        assert ctx.blocks and {b.hit.path for b in ctx.blocks} == {worker}


@pytest.mark.parametrize(
    "ref",
    [REF, "services/payments.md#Rollback-Procedure", "services/payments.md#ROLLBACK PROCEDURE",
     "services/payments.md:12", "services/payments.md:10-18", "./services/payments.md#rollback-procedure"],
    ids=["anchor", "anchor-case", "heading-text", "line", "citation", "dot-slash"],
)
def test_show_takes_every_printed_reference(ix: mdfts.Index, ref: str) -> None:
    shown = ix.show(ref)
    assert isinstance(shown, mdfts.Hit) and shown.ref == REF
    assert ix.show(str(shown.id)) == shown


def test_a_line_before_the_first_section_gives_the_first(ix: mdfts.Index) -> None:
    first = ix.outline("services/payments.md")[0]
    shown = ix.show("services/payments.md:1")
    assert isinstance(shown, mdfts.Hit) and shown.id == first.id


def test_a_bare_path_gives_the_outline(ix: mdfts.Index) -> None:
    shown = ix.show("nesting.md")
    assert isinstance(shown, mdfts.Outline)
    assert [(e.level, e.ref) for e in shown.entries] == [
        (1, "nesting.md#top"), (2, "nesting.md#child-a"), (3, "nesting.md#grandchild"),
        (2, "nesting.md#child-b"), (4, "nesting.md#skipped-a-level")]
    assert all(e.tokens == (e.chars + 3) // 4 for e in shown.entries)
    assert ix.outline("nesting.md") == list(shown.entries)


def test_a_miss_lists_the_nearest_anchors(ix: mdfts.Index) -> None:
    with pytest.raises(RefError, match=r"no section 'services/payments.md#rolback'; nearest anchors in "
                                       r"services/payments.md: #rollback-procedure"):
        ix.show("services/payments.md#rolback")
    with pytest.raises(RefError, match=r"no document 'services/paymnts.md' in this index; nearest documents: "
                                       r"services/payments.md"):
        ix.show("services/paymnts.md#x")


def test_neighbors_name_their_relation(ix: mdfts.Index) -> None:
    rel = [(h.relation, h.heading) for h in ix.neighbors("services/payments.md#required-env-vars")]
    assert rel == [("self", "Required ENV vars"), ("parent", "payments"), ("previous", "payments"),
                   ("next", "Rollback procedure")]


def test_token_records_and_kind_filter(ix: mdfts.Index) -> None:
    hits = ix.token("PAYMENTS_DB_URL")
    assert hits and all(h.token == "PAYMENTS_DB_URL" and h.kind == "env_var" and h.exact for h in hits)
    assert all(h.body and h.ref.startswith(h.path + "#") for h in hits)
    assert ix.token("PAYMENTS_DB_URL", kind="cli_flag") == []


def test_token_kind_filter_reads_past_the_other_kinds(tmp_path: Path) -> None:
    """The kind asked for is found however many rows of other kinds sort before it: 150 sections
    name `kiln_temp_max` as an identifier, one as the ENV var KILN_TEMP_MAX."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(150):
        (docs / f"a{i:03d}.md").write_text(f"# Note {i}\n\nThe `kiln_temp_max` setting.\n")
    (docs / "z.md").write_text("# Env\n\nSet KILN_TEMP_MAX before firing.\n")
    build_index([docs], tmp_path / "k.db")
    with mdfts.open_index(tmp_path / "k.db") as ix:
        assert [(h.path, h.kind) for h in ix.token("kiln_temp_max", kind="env_var")] == [("z.md", "env_var")]
        assert len(ix.token("kiln_temp_max", kind="identifier", limit=200)) == 150


def test_outline_without_a_path_lists_documents(ix: mdfts.Index) -> None:
    docs = ix.outline()
    assert len(docs) == int(ix.meta["documents"]) and all(isinstance(d, mdfts.DocumentEntry) for d in docs)
    under = ix.outline("services/")
    assert [d.path for d in under] == ["services/env-vars.md", "services/payments-worker.md", "services/payments.md"]


def test_query_runs_a_stored_query(ix: mdfts.Index) -> None:
    rows = ix.query("outline", path="nesting.md")
    assert [r["heading"] for r in rows] == ["Top", "Child a", "Grandchild", "Child b", "Skipped a level"]
    assert rows == ix.run("outline", path="nesting.md")


def test_info_gives_numbers_as_numbers(ix: mdfts.Index, fixture_db: Path) -> None:
    meta = ix.info()["meta"]
    assert all(isinstance(meta[k], int) for k in ("documents", "sections", "tokens", "schema_version"))
    cli_meta = json.loads(run_cli(["info", fixture_db, "--json"]).stdout)["meta"]
    assert cli_meta["sections"] == meta["sections"] and isinstance(cli_meta["sections"], int)


def test_url_whenever_the_index_has_a_template(linked_db: Path) -> None:
    with mdfts.open_index(linked_db) as ix:
        commit = ix.meta.get("git_commit") or "HEAD"
        want = f"https://git.example/docs/blob/{commit}/services/payments.md#L10-L18"
        assert ix.search("payments rollback", limit=1)[0].url == want
        shown = ix.show(REF)
        assert isinstance(shown, mdfts.Hit) and shown.url == want
        assert ix.token("PAYMENTS_DB_URL")[0].url
        assert want in ix.context("payments rollback", max_tokens=1000).text
    hits = json.loads(run_cli(["search", linked_db, "payments rollback", "--json", "-k", "1"]).stdout)
    assert hits[0]["url"] == want


def test_parse_ref_forms() -> None:
    assert parse_ref(" 12 ").id == 12
    assert (parse_ref("a/b.md#X").kind, parse_ref("a/b.md#X").anchor) == ("anchor", "X")
    assert (parse_ref("a/b.md:83-103").kind, parse_ref("a/b.md:83-103").line) == ("line", 83)
    assert (parse_ref("a/b.md").kind, parse_ref("a/b.md").path) == ("path", "a/b.md")
    assert parse_ref("a/b.md#").anchor == ""  # the lead text before the first heading
    with pytest.raises(RefError):
        parse_ref("  ")


@pytest.mark.parametrize("ref", ["a/b.md:١٢", "a/b.md:１２", "a/b.md:12-١٣", "a/b.md:۱۲", "١٢"],
                         ids=["arabic-indic", "fullwidth", "arabic-indic-end", "persian", "arabic-indic-id"])
def test_only_ascii_digits_make_a_line_or_an_id(ref: str) -> None:
    # int() and str.isdecimal() take any script's digits: "a/b.md:١٢" was line 12 and "١٢" id 12.
    # Like "a/b.md:12a", such a suffix is part of the path.
    assert (parse_ref(ref).kind, parse_ref(ref).path, parse_ref(ref).line, parse_ref(ref).id) == (
        "path", ref, None, None)


def test_a_line_in_other_digits_names_no_section(ix: mdfts.Index) -> None:
    assert isinstance(ix.show("services/payments.md:10"), mdfts.Hit)
    with pytest.raises(RefError, match=r"^no document 'services/payments.md:١٠' in this index; nearest documents: "
                                       r"services/payments.md"):
        ix.show("services/payments.md:١٠")


def test_a_section_id_as_an_int_is_a_reference(ix: mdfts.Index) -> None:
    # Hit.id is an int, and section_page takes one: show(hit.id) was "AttributeError: 'int'
    # object has no attribute 'strip'".
    hit = ix.show(REF)
    assert isinstance(hit, mdfts.Hit)
    assert ix.show(hit.id) == mdfts.show(ix, hit.id) == hit
    assert ix.neighbors(hit.id) == mdfts.neighbors(ix, hit.id) == ix.neighbors(REF)
    with pytest.raises(RefError, match="^no section with id -1 in this index$"):
        ix.show(-1)


@pytest.mark.parametrize("ref", [None, b"42", 4.0, True], ids=["none", "bytes", "float", "bool"])
def test_a_reference_of_another_type_is_a_one_line_error(ix: mdfts.Index, ref: Any) -> None:
    message = f"^a reference is a str or an int id, not {re.escape(repr(ref))}$"
    calls = [lambda: ix.show(ref), lambda: ix.neighbors(ref)]
    for call in calls + [lambda: ix.outline(ref)] * (ref is not None):  # outline(None) lists the documents
        with pytest.raises(RefError, match=message):
            call()

def test_build_json_summary(tmp_path: Path) -> None:
    result = run_cli(["build", FIXTURE_DOCS, "-o", tmp_path / "x.db", "--json"])
    summary = json.loads(result.stdout)
    assert result.exit_code == 0 and result.stderr == ""
    with mdfts.open_index(tmp_path / "x.db") as ix:
        assert (summary["documents"], summary["sections"]) == (int(ix.meta["documents"]), int(ix.meta["sections"]))
    assert isinstance(summary["bytes"], int) and summary["skipped"] == []


def test_an_index_wraps_a_connection_it_does_not_own(fixture_db: Path, ix: mdfts.Index) -> None:
    # Datasette hands the plugin its own connection (db.execute_fn): the read layer runs on it
    # and leaves it open for the next request.
    conn = sqlite3.connect(fixture_db.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
    try:
        with mdfts.Index.from_connection(conn) as wrapped:
            assert wrapped.conn is conn and wrapped.name == fixture_db.stem
            assert wrapped.meta == ix.meta
            assert [h.id for h in wrapped.search("payments rollback", limit=3)] == [
                h.id for h in ix.search("payments rollback", limit=3)]
        assert conn.execute("select count(*) from sections").fetchone()[0] > 0  # still open
        assert mdfts.Index.from_connection(conn, "elsewhere/named.db").name == "named"
    finally:
        conn.close()


def test_a_connection_to_another_database_is_refused(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "plain.db")
    try:
        with pytest.raises(mdfts.IndexVersionError, match="plain.db: not an mdfts index"):
            mdfts.Index.from_connection(conn)
        conn.execute("select 1")  # a refused connection is not closed either
    finally:
        conn.close()


def test_a_section_page_links_the_document_headings_only(ix: mdfts.Index) -> None:
    hit = ix.show(REF)
    assert isinstance(hit, mdfts.Hit)
    page = ix.section_page(hit.id)
    assert page is not None and page.section == hit and page.chars == len(hit.body)
    headings = {s.heading: s.id for s in ix.outline("services/payments.md")}  # type: ignore[union-attr]
    assert [a.heading for a in page.ancestors] == ["payments"] and page.parent == page.ancestors[0]
    assert page.previous is not None and page.previous.heading == "Required ENV vars"
    assert page.next is not None and (page.next.heading, page.next.id) == ("Known issues", headings["Known issues"])
    assert page.children == () and not page.more_children
    assert ("PAYMENTS_DB_URL", "env_var") in {(t.token, t.kind) for t in page.tokens}

    top = ix.section_page(headings["payments"], max_children=2)
    assert top is not None and top.ancestors == () and top.parent is None and top.previous is None
    assert [c.heading for c in top.children] == ["Required ENV vars", "Rollback procedure"] and top.more_children
    assert ix.section_page(headings["payments"]).more_children is False  # type: ignore[union-attr]
    assert ix.section_page(10**9) is None


def test_a_section_page_reads_its_tokens_from_its_own_row(ix: mdfts.Index) -> None:
    """The tokens of `show` are the tokens view's rows for the section, by kind then token; read
    from the section's row, not by a scan of every token row (token_rows is keyed by token)."""
    from mdfts.lookup import _KINDS_JSON, _TOKENS_SQL

    plan = " | ".join(r[3] for r in ix.conn.execute("explain query plan " + _TOKENS_SQL, (_KINDS_JSON, 1, 500)))
    assert "SEARCH s USING INTEGER PRIMARY KEY" in plan and "token_rows" not in plan, plan
    ids = [i for (i,) in ix.conn.execute("select id from sections order by id")]
    pages = {i: ix.section_page(i) for i in ids}
    want = {i: [tuple(r) for r in ix.conn.execute(
        "select token, kind from tokens where section_id = ? group by token, kind order by kind, token", (i,))]
        for i in ids}
    assert {i: [(t.token, t.kind) for t in p.tokens] for i, p in pages.items() if p} == want
    assert sum(map(len, want.values())) > 10 and len({k for w in want.values() for _, k in w}) >= 4


@pytest.mark.parametrize("ref", ["99999999999999999999999", "²"], ids=["past-int64", "superscript-digit"])
def test_a_number_no_section_can_have_is_a_miss(ix: mdfts.Index, ref: str) -> None:
    with pytest.raises(RefError):
        ix.show(ref)


@pytest.mark.parametrize("q", ["\0payments rollback", "payments\0rollback", "payments rollback\0"],
                         ids=["leading", "between", "trailing"])
def test_a_nul_in_the_text_reads_as_a_space(ix: mdfts.Index, q: str) -> None:
    # SQLite's string functions stop at a NUL: the words after one were dropped.
    want = [h.id for h in ix.search(q.replace("\0", " "))]
    assert len(want) > 1
    assert [h.id for h in ix.search(q)] == want
    matches = [b.hit.id for b in ix.context(q, max_tokens=4000).blocks if b.role == "match"]
    assert matches == [b.hit.id for b in ix.context(q.replace("\0", " "), max_tokens=4000).blocks if b.role == "match"]


@pytest.mark.parametrize("limit", [0, -1, -5])
def test_a_limit_below_one_gives_no_hits(ix: mdfts.Index, limit: int) -> None:
    # SQLite reads a negative LIMIT as no limit: the loop that stops at `limit` kept one hit.
    assert ix.search("payments rollback", limit=limit) == []
    assert ix.search_many(["payments rollback"], limit=limit).__next__() == ("payments rollback", [])
    assert ix.token("E1027", limit=limit) == []
    assert ix.token("E1027", kind="error_code", limit=limit) == []
    assert [b for b in ix.context("payments rollback", limit=limit).blocks if b.role == "match"] == []
    assert mdfts.rrf_merge({"a": ix.search("payments rollback")}, limit) == []
    # A misspelt kind is still named as one, whatever the limit.
    with pytest.raises(mdfts.MdftsError, match="^no token kind 'env'"):
        ix.token("E1027", kind="env", limit=limit)


@pytest.mark.parametrize(("limit", "shown"), [(2.5, "2.5"), ("3", "'3'"), (True, "True"), (None, "None")],
                         ids=["float", "str", "bool", "none"])
def test_a_limit_that_is_no_int_is_a_one_line_error(ix: mdfts.Index, limit: Any, shown: str) -> None:
    # A float was SQLite's "datatype mismatch", a str a TypeError from `limit < 1`, True a limit of 1.
    message = f"^limit must be an int, not {re.escape(shown)}$"
    calls: list[Callable[[], object]] = [
        lambda: ix.search("payments rollback", limit=limit),
        lambda: next(ix.search_many(["payments rollback"], limit=limit)),
        lambda: mdfts.search(ix, "payments rollback", limit=limit),
        lambda: ix.token("E1027", limit=limit),
        lambda: ix.token("E1027", kind="error_code", limit=limit),
        lambda: ix.context("payments rollback", limit=limit),
        lambda: mdfts.rrf_merge({"a": ix.search("payments rollback")}, limit),
    ]
    for call in calls:
        with pytest.raises(mdfts.QueryError, match=message):
            call()
    with pytest.raises(mdfts.QueryError, match=f"^max_children must be an int, not {re.escape(shown)}$"):
        ix.section_page(ix.search("payments rollback")[0].id, max_children=limit)


@pytest.mark.parametrize(("value", "shown"), [(500.5, "500.5"), ("500", "'500'"), (True, "True"), (None, "None")],
                         ids=["float", "str", "bool", "none"])
def test_a_budget_or_section_id_that_is_no_int_is_a_one_line_error(ix: mdfts.Index, value: Any, shown: str) -> None:
    # A float budget was printed as budget="500.5", a str or None a TypeError from a comparison;
    # a float id read that section, True section 1, a str or None a TypeError.
    for call in (lambda: ix.context("payments rollback", max_tokens=value),
                 lambda: mdfts.context(ix, "payments rollback", max_tokens=value)):
        with pytest.raises(mdfts.QueryError, match=f"^max_tokens must be an int, not {re.escape(shown)}$"):
            call()
    with pytest.raises(mdfts.QueryError, match=f"^section_id must be an int, not {re.escape(shown)}$"):
        ix.section_page(value)

@pytest.mark.parametrize(("k", "message"), [(-1, "k must be 0 or more, not -1"), (-60, "k must be 0 or more, not -60"),
                                            (2.5, "k must be an int, not 2.5")], ids=["minus-one", "minus-sixty", "float"])
def test_a_fusion_constant_below_zero_is_a_one_line_error(ix: mdfts.Index, k: Any, message: str) -> None:
    # 1 / (k + rank) divided by zero at k = -rank (ZeroDivisionError), and gave negative scores below.
    with pytest.raises(mdfts.QueryError, match=f"^{re.escape(message)}$"):
        mdfts.rrf_merge({"a": ix.search("payments rollback"), "b": ix.search("rollback")}, 5, k=k)
    assert mdfts.rrf_merge({"a": ix.search("payments rollback")}, 2, k=0)[0].score == 1.0

def test_threads_share_one_open_index(ix: mdfts.Index) -> None:
    # A server opens its index once and answers from a pool of threads: the connection is
    # read-only and immutable, so any thread may read it (sqlite3 refused, and the refusal was
    # reported as "not an mdfts index").
    from concurrent.futures import ThreadPoolExecutor

    queries = ["payments rollback", "PAYMENTS_DB_URL", "E1027", "ledger"] * 4
    with mdfts.open_index(ix.path) as fresh, ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda q: [h.id for h in fresh.search(q)], queries))
        shown = list(pool.map(lambda q: fresh.show(REF).id, queries))
    assert got == [[h.id for h in ix.search(q)] for q in queries] and any(got)
    assert shown == [ix.show(REF).id] * len(queries)


@pytest.mark.parametrize("warm", [False, True], ids=["fresh", "queries-read"])
def test_a_closed_index_says_so(fixture_db: Path, warm: bool) -> None:
    # It said "not an mdfts index (Cannot operate on a closed database.)", or a failed query.
    ix = mdfts.open_index(fixture_db)
    with ix:
        if warm:
            assert ix.search("payments")
        with ix:  # re-entered: the inner exit closes it, as for a file
            pass
    ix.close()  # a second close does nothing
    calls = [lambda: ix.search("payments"), lambda: ix.show(REF), lambda: ix.token("E1027"), lambda: ix.outline(),
             lambda: ix.context("payments"), lambda: ix.section_page(1), lambda: ix.run("documents"),
             lambda: ix.info(), lambda: mdfts.search(ix, "payments")]
    for call in calls:
        with pytest.raises(mdfts.MdftsError, match=r"^\S*fixtures\.db: this index is closed$"):
            call()


@pytest.mark.parametrize("max_children", [0, -1, -3])
def test_a_section_page_below_one_child_lists_none(ix: mdfts.Index, max_children: int) -> None:
    # max_children + 1 went to SQL's LIMIT: -3 read every child (a negative LIMIT is none) and
    # kept all but the last three; a leaf said it had more children.
    top = ix.show("services/payments.md#payments")
    leaf = ix.show(REF)
    assert isinstance(top, mdfts.Hit) and isinstance(leaf, mdfts.Hit)
    page = ix.section_page(top.id, max_children=max_children)
    assert page is not None and (page.children, page.more_children) == ((), True)
    page = ix.section_page(leaf.id, max_children=max_children)
    assert page is not None and (page.children, page.more_children) == ((), False)


@pytest.mark.parametrize("change", ["rebuilt", "deleted"])
def test_info_describes_the_file_it_has_open(fixture_db: Path, tmp_path: Path, change: str) -> None:
    # info() took `bytes` from the path: the size of another file after a rebuild replaced it,
    # a FileNotFoundError once it was deleted, while every lookup still read the open file.
    db = tmp_path / "docs.db"
    db.write_bytes(fixture_db.read_bytes())
    with mdfts.open_index(db) as ix:
        before = ix.info()
        assert before["bytes"] == db.stat().st_size
        if change == "rebuilt":
            (tmp_path / "other").mkdir()
            (tmp_path / "other" / "a.md").write_text("# A\n\none line\n")
            build_index([tmp_path / "other"], db)
            assert db.stat().st_size != before["bytes"]
        else:
            db.unlink()
        assert ix.info() == before and ix.search("payments rollback")


@pytest.fixture(scope="module")
def anchors_ix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[mdfts.Index]:
    docs = tmp_path_factory.mktemp("anchors")
    (docs / "doc.md").write_text("# ⚖️ Licensing\n\nMIT.\n\n## हिन्दी भाषा\n\nपाठ\n\n"
                                 "## Private UI with  Multiple Ingress\n\nTwo spaces.\n", encoding="utf-8")
    out = docs.parent / "anchors.db"
    build_index([docs], out)
    with mdfts.open_index(out) as index:
        yield index


@pytest.mark.parametrize(
    ("ref", "heading"),
    [
        ("doc.md#%EF%B8%8F-licensing", "⚖️ Licensing"),  # a fragment as a browser copies it
        ("doc.md#%E0%A4%B9%E0%A4%BF%E0%A4%A8%E0%A5%8D%E0%A4%A6%E0%A5%80-%E0%A4%AD%E0%A4%BE%E0%A4%B7%E0%A4%BE",
         "हिन्दी भाषा"),
        ("doc.md#हिन्दी भाषा", "हिन्दी भाषा"),  # the heading's text, slugged as the anchors are
        ("doc.md#private-ui-with-multiple-ingress", "Private UI with Multiple Ingress"),  # MkDocs' slug
    ],
    ids=["percent-encoded-emoji", "percent-encoded-hindi", "hindi-heading-text", "collapsed-hyphens"],
)
def test_show_finds_an_anchor_as_links_write_it(anchors_ix: mdfts.Index, ref: str, heading: str) -> None:
    """A link copied from a browser is percent-encoded (GitHub's #%EF%B8%8F-licensing); a docs site
    built with MkDocs collapses the two hyphens GitHub writes for `with  Multiple`."""
    shown = anchors_ix.show(ref)
    assert isinstance(shown, mdfts.Hit) and shown.heading == heading


def test_context_reads_a_matchs_relatives_not_its_childrens_bodies(parent_db: Path, bodies_read: list[int]) -> None:
    # context adds a match's parent, previous and next sections. It found them with the neighbors
    # query, which returns the match's body again and every child's: here 500 children's 1.2 KB,
    # in the hostile corpus of #16 a 20 MB section's (0.86 s a context call).
    with mdfts.open_index(parent_db) as ix:
        ctx = ix.context("rollback intro", max_tokens=2_000)
    assert [(b.role, b.hit.heading) for b in ctx.blocks] == [("match", "Top"), ("next", "child 0")]
    assert sum(bodies_read) < 5_000  # the match, from the search, and its next section (it was 609 KB)
