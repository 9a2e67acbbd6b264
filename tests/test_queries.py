"""The shipped queries: headers, shell parity, no input makes them raise, and ranking sense."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from mdfts.artifact import SOURCES, StoredQuery
from mdfts.errors import QueryError
from mdfts.index import connect
from mdfts.lookup import search, token
from mdfts.queries import package_queries, parse_query, run_query, sql_params

from conftest import QUERIES_DIR, require_sqlite3_binary, run_cli

QUERY_FILES = sorted(p.stem for p in QUERIES_DIR.glob("*.sql"))
TEXT_PARAMS = {"q", "token", "path", "anchor", "glob"}

# One realistic set of parameters per query, on the fixture index.
EXAMPLES: dict[str, dict[str, Any]] = {
    "search": {"q": "payments rollback PAYMENTS_DB_URL", "limit": 5},
    "token": {"token": "PAYMENTS_DB_URL"},
    "section": {"path": "services/payments.md", "anchor": "rollback-procedure"},
    "neighbors": {"id": 3},
    "outline": {"path": "services/payments.md"},
    "documents": {"glob": "services/*"},
}


def test_every_query_file_has_an_example() -> None:
    assert sorted(EXAMPLES) == QUERY_FILES
    assert [q.name for q in package_queries()] == QUERY_FILES


@pytest.mark.parametrize("name", QUERY_FILES)
def test_header(name: str) -> None:
    text = (QUERIES_DIR / f"{name}.sql").read_text(encoding="utf-8")
    header = [line for line in text.splitlines() if line.startswith("--")]
    assert header[0].startswith(f"-- {name}: ") and len(header[0]) > len(name) + 10
    assert any(line.startswith("-- params:") for line in header)
    assert any(line.startswith("-- returns:") for line in header)
    q = parse_query(name, text)
    for p in q.params:  # every parameter the SQL uses is documented in the header
        assert f":{p}" in "\n".join(header), p
    assert text.rstrip().endswith(";") and text.count(";") == text.rstrip().count(";")


def test_token_header_names_every_source() -> None:
    text = (QUERIES_DIR / "token.sql").read_text(encoding="utf-8")
    header = " ".join(line.removeprefix("--").strip() for line in text.splitlines() if line.startswith("--"))
    listed = header.split("source (", 1)[1].split(")", 1)[0].replace(" or ", ", ")
    assert tuple(listed.split(", ")) == SOURCES


def test_every_bm25_in_search_weighs_the_columns_alike() -> None:
    """search.sql calls bm25() in three places (the OR pass, the AND pass, a named page's best
    sections); SQL has no constant to share the column weights, so they are written out in each.
    They must be one list, or the passes would rank by different scores."""
    sql = (QUERIES_DIR / "search.sql").read_text(encoding="utf-8")
    weights = re.findall(r"bm25\(sections_fts, ([^)]*)\)", sql)
    assert len(weights) == 3 and len(set(weights)) == 1, weights


def test_parse_query_needs_a_header() -> None:
    with pytest.raises(QueryError, match=r"queries/x.sql: no header comment"):
        parse_query("x", "select 1;")


def test_sql_params_skip_strings_and_comments() -> None:
    assert sql_params("-- :a\nselect ':b', \":c\", :d, :e, :d /* :f */ from t where x::int") == ("d", "e")


@pytest.mark.parametrize("name", QUERY_FILES)
def test_runs_on_the_fixture_index(fixture_db: Path, name: str) -> None:
    conn = connect(fixture_db)
    rows = run_named(conn, name, EXAMPLES[name])
    conn.close()
    assert rows, f"{name} returned no rows for {EXAMPLES[name]}"
    assert all(isinstance(r["id"], int) for r in rows)


def run_named(conn: sqlite3.Connection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    from mdfts.queries import get_query

    return run_query(conn, get_query(conn, name), params)


def _shell_ids(db: Path, name: str, params: dict[str, Any]) -> list[int]:
    args = [require_sqlite3_binary(), "-json", "-readonly", str(db)]
    for key, value in params.items():
        # The shell reads a double-quoted argument with backslash escapes, then evaluates the
        # value as SQL: pass a quoted SQL string literal for text.
        literal = str(value) if isinstance(value, int) else "'" + value.replace("'", "''") + "'"
        literal = literal.replace("\\", "\\\\").replace('"', '\\"')
        args.append(f'.parameter set :{key} "{literal}"')
    args.append(f".read {QUERIES_DIR / name}.sql")
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, check=True)
    return [row["id"] for row in json.loads(out.stdout or "[]")]


def _cli_ids(db: Path, name: str, params: dict[str, Any]) -> list[int]:
    args = ["query", db, name, "--json", *(f"--param={k}={v}" for k, v in params.items())]
    result = run_cli(args)
    assert result.exit_code == 0, result.output
    return [row["id"] for row in json.loads(result.stdout)]


@pytest.mark.parametrize("name", QUERY_FILES)
def test_shell_parity_fixture(fixture_db: Path, name: str) -> None:
    ids = _shell_ids(fixture_db, name, EXAMPLES[name])
    assert ids and ids == _cli_ids(fixture_db, name, EXAMPLES[name])


SEARCHES = [
    "payments rollback PAYMENTS_DB_URL",
    "how do I roll back the billing service?",
    "E1027",
    "--force-with-lease",
    "customer_billing_events backfill",
    "rotate secrets",
    '"rollback" payments\'s (PAYMENTS_DB_URL)',
    "on-call escalation",
]


@pytest.mark.parametrize("q", SEARCHES)
def test_search_parity_sample(sample_db: Path, q: str) -> None:
    ids = _shell_ids(sample_db, "search", {"q": q, "limit": 10})
    result = run_cli(["search", "--json", "-k", "10", "--", sample_db, q])  # "--": q may start with -
    assert result.exit_code == 0
    assert ids and ids == [h["id"] for h in json.loads(result.stdout)]


@pytest.mark.parametrize("name", QUERY_FILES)
def test_explain_lists_every_shipped_query_in_python(fixture_db: Path, name: str) -> None:
    """EXPLAIN's listing holds the statement's constants as text: one of invalid UTF-8 (a prefix
    bound of the byte F5 in search.sql) made Python's sqlite3 fail to decode it."""
    from mdfts.queries import get_query

    conn = connect(fixture_db)
    query = get_query(conn, name)
    ops = conn.execute("explain " + query.sql, {p: None for p in query.params}).fetchall()
    conn.close()
    assert ops


@pytest.mark.parametrize("prefix", ["sops/", "runbooks/pay", "", "nowhere/"])
def test_search_prefix_parity_sample(sample_db: Path, prefix: str) -> None:
    """:prefix in the sqlite3 shell gives what `--path-prefix` gives (none for a prefix no path has)."""
    ids = _shell_ids(sample_db, "search", {"q": "rollback payments", "limit": 10, "prefix": prefix})
    result = run_cli(["search", "--json", "-k", "10", "--path-prefix", prefix, "--", sample_db, "rollback payments"])
    assert result.exit_code == 0
    assert ids == [h["id"] for h in json.loads(result.stdout)]
    assert (ids == []) == (prefix == "nowhere/")


# ---- no input makes a shipped query raise -------------------------------------------------

HOSTILE = [
    "", " ", "\t\n\r", '"', "'", '""', "foo\"bar", "(", "foo)", "-", "-x", "foo -bar", "*", "*foo", "foo*",
    "^", "^foo", "AND", "OR", "NOT", "NEAR", "NEAR(foo bar)", "foo AND", "a OR b NOT c", "col:x",
    "path:docs", "{path text}:x", "\\", "\\\"", "\0", "x\0y", "\ud800", "a\udfffb", "🙂", "日本語",
    "%", "_", "--", "/*", "*/", ";", "'; drop table sections; --", "x" * 100_000,
    " ".join(["payments"] * 20_000),
]
_any_text = st.text(st.characters(exclude_categories=()), max_size=300)
_fts_ish = st.lists(
    st.sampled_from(['"', "'", "(", ")", "*", "^", "-", ":", "AND", "OR", "NOT", "NEAR", "path:", "x", "E1027",
                     "PAYMENTS_DB_URL", "--flag", " ", "\\", "{", "}", ",", ".", "é", "\ud83d"]),
    max_size=30,
).map("".join)


@pytest.fixture(scope="module")
def fixture_queries(fixture_db: Path) -> tuple[sqlite3.Connection, list[StoredQuery]]:
    from mdfts.queries import index_queries

    conn = connect(fixture_db)
    return conn, list(index_queries(conn).values())


def _run_all(conn: sqlite3.Connection, queries: list[StoredQuery], text: str) -> None:
    for q in queries:
        params = {p: text if p in TEXT_PARAMS else None for p in q.params}  # None: NULL, as unset
        run_query(conn, q, params)


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_text_never_raises(fixture_queries: tuple[sqlite3.Connection, list[StoredQuery]], text: str) -> None:
    _run_all(*fixture_queries, text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(_any_text, _fts_ish))
@example(text="x" * 100_000)
def test_any_text_never_raises(fixture_queries: tuple[sqlite3.Connection, list[StoredQuery]], text: str) -> None:
    _run_all(*fixture_queries, text)


@pytest.mark.slow  # dozens of examples, each opening the index: seconds
@settings(max_examples=40, deadline=None)
@given(limit=st.one_of(st.none(), st.integers(-5, 10**6)), id_=st.one_of(st.none(), st.integers(-2**63, 2**63 - 1)))
def test_any_number_never_raises(fixture_db: Path, limit: int | None, id_: int | None) -> None:
    conn = connect(fixture_db)
    for q in package_queries():
        params = {"limit": limit, "id": id_}
        run_query(conn, q, {p: params.get(p) for p in q.params})
    conn.close()


NO_TERM = ["", "   ", "!!!", '""', "''", "-", "*", "^", "()", "?!.,;", "--", "\ud800"]


@pytest.mark.parametrize("text", NO_TERM, ids=range(len(NO_TERM)))
def test_no_usable_term_no_rows(fixture_db: Path, text: str) -> None:
    assert search(fixture_db, text) == []
    result = run_cli(["search", "--", fixture_db, text])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.startswith("no usable search term: ")


@pytest.mark.slow  # dozens of examples, each opening the index: seconds
@settings(max_examples=60, deadline=None)
@given(text=st.text(st.sampled_from(" \t!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), max_size=40))
def test_punctuation_only_finds_nothing(fixture_db: Path, text: str) -> None:
    assert search(fixture_db, text) == []


# ---- ranking behaviour any sensible ranking has ---------------------------------------------

def _top(db: Path, q: str, k: int = 10) -> list[tuple[str, str]]:
    return [(h["path"], h["heading"]) for h in search(db, q, limit=k)]


@pytest.mark.parametrize(
    ("db", "q", "first"),
    [
        ("sample_db", "payments rollback PAYMENTS_DB_URL", ("runbooks/payments.md", "Rollback procedure")),
        ("sample_db", "payments-worker rollback", ("runbooks/payments-worker.md", "Rollback procedure")),
        ("fixture_db", "payments rollback PAYMENTS_DB_URL", ("services/payments.md", "Rollback procedure")),
        ("fixture_db", "E1027", ("services/payments.md", "E1027 idempotency conflicts")),
        ("fixture_db", "STRIPE_WEBHOOK_SECRET", ("services/payments.md", "Required ENV vars")),
    ],
    ids=["sample-service-rollback", "sample-worker-rollback", "fixture-service-rollback", "error-code-heading",
         "env-var-once"],
)
def test_first_hit(request: pytest.FixtureRequest, db: str, q: str, first: tuple[str, str]) -> None:
    assert _top(request.getfixturevalue(db), q)[0] == first


@pytest.mark.parametrize(
    "db_name",
    [
        "sample_db",
        "fixture_db",
    ],
)
def test_exact_token_beats_a_longer_one(request: pytest.FixtureRequest, db_name: str) -> None:
    db = request.getfixturevalue(db_name)
    conn = sqlite3.connect(db)
    exact = {r[0] for r in conn.execute("select section_id from tokens where token = 'PAYMENTS_DB_URL'")}
    ro_only = {r[0] for r in conn.execute("select section_id from tokens where token = 'PAYMENTS_DB_URL_RO'")} - exact
    conn.close()
    assert exact and ro_only
    ranks = {h["id"]: h["rank"] for h in search(db, "PAYMENTS_DB_URL", limit=100)}
    assert exact <= set(ranks)  # every section that says it is found
    worst_exact = max(ranks[i] for i in exact)
    assert all(ranks[i] > worst_exact for i in ro_only if i in ranks)


@pytest.mark.parametrize("q", SEARCHES)
def test_total_order(sample_db: Path, q: str) -> None:
    hits = search(sample_db, q, limit=50)
    assert [h["rank"] for h in hits] == list(range(1, len(hits) + 1))
    keys = [(-h["score"], h["id"]) for h in hits]
    assert keys == sorted(keys) and len({h["id"] for h in hits}) == len(hits)
    assert [h["id"] for h in search(sample_db, q, limit=5)] == [h["id"] for h in hits[:5]]


def test_limit(sample_db: Path) -> None:
    assert len(search(sample_db, "payments", limit=3)) == 3
    assert len(search(sample_db, "payments")) == 10


def test_search_content_is_the_section_markdown(fixture_db: Path) -> None:
    [hit] = search(fixture_db, "payments rollback PAYMENTS_DB_URL", limit=1)
    assert hit["content"].startswith("## Rollback procedure\n\nCheck `PAYMENTS_DB_URL`")
    assert (hit["start_line"], hit["end_line"], hit["anchor"]) == (10, 18, "rollback-procedure")
    assert hit["trail"] == ["payments", "Rollback procedure"]


@pytest.mark.parametrize(
    ("tok", "expected"),
    [
        ("PAYMENTS_DB_URL", [("heading_markup.md", "PAYMENTS_DB_URL", 1), ("services/env-vars.md", "PAYMENTS_DB_URL", 1), ("services/payments.md", "PAYMENTS_DB_URL", 1),
                             ("services/payments.md", "PAYMENTS_DB_URL", 1)]),
        ("payments_db_url", [("heading_markup.md", "PAYMENTS_DB_URL", 0), ("services/env-vars.md", "PAYMENTS_DB_URL", 0), ("services/payments.md", "PAYMENTS_DB_URL", 0),
                             ("services/payments.md", "PAYMENTS_DB_URL", 0)]),
        ("`E1027`.", [("services/payments.md", "E1027", 1)]),
        ("E10", []),
    ],
    ids=["exact", "other-case", "trimmed", "no-prefix-match"],
)
def test_token_query(fixture_db: Path, tok: str, expected: list[tuple[str, str, int]]) -> None:
    assert [(r["path"], r["token"], r["exact"]) for r in token(fixture_db, tok)] == expected


def test_token_case_exact_first(tmp_path: Path) -> None:
    from mdfts.build import build_index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nuse `Api_Key`\n", encoding="utf-8")
    (docs / "b.md").write_text("# B\n\nuse `API_KEY`\n", encoding="utf-8")
    build_index([docs], tmp_path / "t.db")
    assert [(r["path"], r["exact"]) for r in token(tmp_path / "t.db", "API_KEY")] == [("b.md", 1), ("a.md", 0)]


def test_a_slash_before_a_name_of_one_part_is_no_path(tmp_path: Path) -> None:
    """The builder reads `'/kiln.example.org'` as the host kiln.example.org (a path has two
    parts at least) and `/kilns/kiln.example.org` as a path: the token lookup and search.sql ask
    for what it indexed, so the name written with its slash is found, and marked exact."""
    import mdfts
    from mdfts.build import build_index

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "mirror.md").write_text("# Mirror\n\n## Strip the host\n\n```sql\nREPLACE(url, '/kiln.example.org', '')\n```\n",
                                    encoding="utf-8")
    (docs / "paths.md").write_text("# Paths\n\nCopies sit in `/kilns/kiln.example.org`.\n", encoding="utf-8")
    db = tmp_path / "t.db"
    build_index([docs], db)
    assert [(r["path"], r["token"]) for r in token(db, "/kiln.example.org")] == [("mirror.md", "kiln.example.org")]
    assert [r["path"] for r in token(db, "/kilns/kiln.example.org")] == ["paths.md"]
    (hit,) = mdfts.search(db, "strip /kiln.example.org", limit=1)
    assert (hit.path, hit.heading, hit.exact) == ("mirror.md", "Strip the host", True)
