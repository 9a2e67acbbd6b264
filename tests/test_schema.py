"""The index schema is a public contract (docs/schema.md): names, types, pragmas, meta, queries."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from mdfts.artifact import APPLICATION_ID, KIND_COLUMNS, SCHEMA_VERSION, SOURCES, TOKENIZER
from mdfts.build import build_index
from mdfts.discover import SourceText, discover, read_source
from mdfts.sections import Section, split_sections

from conftest import FIXTURE_DOCS, QUERIES_DIR, REPO, connect_ro

TABLES = {
    "documents": ["id", "path", "title", "front_matter", "sha256", "bytes", "lines", "sections", "last_commit",
                  "rows_sha256", "file_words", "sha256_bytes"],
    # What a section stores (schema 4): no copy of its document's title and file words, nor the
    # trail its parent links give (the view sections_full adds them).
    "sections": [
        "id", "document_id", "path", "ordinal", "level", "heading", "ancestors", "anchor",
        "start_line", "end_line", "parent_id", "prev_id", "next_id", "body", "chars",
        "heading_parts", "env_vars", "cli_flags", "error_codes", "identifiers", "names", "versions", "dotted_names",
        "file_paths", "urls", "hosts", "code_spans", "text", "head", "other_anchor", "is_last",
        *(f"{c}_packed" for c in KIND_COLUMNS.values()), "ancestors_packed",
    ],
    "section_includes": ["section_id", "text", "files"],
    "token_norms": ["norm", "id"],
    "token_rows": ["token_id", "section_id", "written", "kind_source"],
    "sections_fts": [
        "text", "file_words", "title", "head", "trail", "path", "env_vars", "cli_flags", "error_codes", "identifiers", "names",
        "versions", "dotted_names", "file_paths", "urls", "hosts", "code_spans",
    ],
    "term_df": ["term", "df", "idf", "wide", "tdf", "tidf"],
    "mdfts_pathwords": ["word"],
    "token_df": ["norm", "df", "idf", "strong"],
    "mdfts_stopwords": ["word", "page"],
    "mdfts_synonyms": ["grp", "word"],
    "mdfts_roles": ["cue", "word"],
    "mdfts_phrasal": ["verb", "particle", "word"],
    "mdfts_plain": ["word", "term"],
    "mdfts_acronyms": ["short", "long", "word"],
    "mdfts_meta": ["key", "value"],
    "mdfts_queries": ["name", "title", "description", "params", "sql"],
}
# The schema-3 tables' columns, unchanged, as views.
VIEWS = {
    "sections_full": [
        "id", "document_id", "path", "title", "ordinal", "level", "heading", "trail", "anchor",
        "start_line", "end_line", "parent_id", "prev_id", "next_id", "body", "chars",
        "file_words", "heading_parts", "env_vars", "cli_flags", "error_codes", "identifiers", "names", "versions", "dotted_names",
        "file_paths", "urls", "hosts", "code_spans", "text", "head", "included", "included_files",
    ],
    "tokens": ["norm", "section_id", "token", "kind", "source"],
    # sections_fts's content: sections_full's indexed columns, the token kinds as stored
    "sections_indexed": [
        "id", "text", "file_words", "title", "head", "trail", "path", "env_vars", "cli_flags", "error_codes",
        "identifiers", "names", "versions", "dotted_names", "file_paths", "urls", "hosts", "code_spans",
    ],
}
# The columns issue #2 names, with exactly these names and meanings.
REQUIRED_SECTION_COLUMNS = [
    "id", "path", "level", "heading", "anchor", "start_line", "end_line", "parent_id", "prev_id", "next_id",
    "body", "text",
]


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    # table_xinfo lists generated columns (hidden 2, 3) too; hidden 1 is FTS5's own (rank, table name).
    return [r[1] for r in conn.execute(f"pragma table_xinfo({table})") if r[6] != 1]


def test_tables(fixture_conn: sqlite3.Connection) -> None:
    names = {r[0] for r in fixture_conn.execute(
        "select name from sqlite_master where type = 'table' and name not like 'sections_fts_%'")}
    assert names == set(TABLES)
    views = {r[0] for r in fixture_conn.execute("select name from sqlite_master where type = 'view'")}
    assert views == set(VIEWS)


@pytest.mark.parametrize("table", list(TABLES) + list(VIEWS))
def test_columns(fixture_conn: sqlite3.Connection, table: str) -> None:
    assert _columns(fixture_conn, table) == {**TABLES, **VIEWS}[table]


def test_tokens_view_gives_back_what_the_build_saw(tmp_path: Path) -> None:
    # token_rows stores the token as written only when it is not its lookup form (in capitals or
    # not), and kind and source as numbers: the view must give back each one as the build saw it.
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURE_DOCS, docs)
    (docs / "cases.md").write_text("# `PaymentsClient` and PAYMENTS_DB_URL\n\n| `retryBudget` | E1027 |\n"
                                   "|---|---|\n\nRun `deploy --force-with-lease` with `Mixed.Case`.\n")
    build_index([docs], tmp_path / "x.db")
    expected = set()
    for f in discover([docs]):
        src = read_source(f)
        for sec in split_sections(src.path, src.text).sections:
            expected |= {(src.path, sec.ordinal, t.norm, t.token, t.kind, t.source) for t in sec.tokens}
    conn = connect_ro(tmp_path / "x.db")
    got = {tuple(r) for r in conn.execute(
        "select s.path, s.ordinal, t.norm, t.token, t.kind, t.source from tokens as t "
        "join sections as s on s.id = t.section_id")}
    assert got == expected
    written = {r[0] for r in conn.execute("select written from token_rows")}
    assert {"", "^", "PaymentsClient", "retryBudget"} <= written  # all three forms are there
    assert {r[0] for r in conn.execute("select source from tokens")} == set(SOURCES)
    conn.close()


def test_token_norms_number_the_forms_in_sorted_order(sample_db: Path) -> None:
    # token_rows holds a form's number, not its text (schema 6): 1, 2, ... in norm order, so the
    # rows keep their (norm, section) order and a build that reused rows numbers them alike.
    conn = connect_ro(sample_db)
    numbered = conn.execute("select norm, id from token_norms order by norm").fetchall()
    assert [i for _, i in numbered] == list(range(1, len(numbered) + 1))
    used = {r[0] for r in conn.execute("select distinct token_id from token_rows")}
    assert used == {i for _, i in numbered}  # no form without rows, no row without its form
    rows = conn.execute("select norm, section_id from tokens").fetchall()
    assert rows == sorted(rows) and len(rows) > len(numbered) > 400
    conn.close()


def test_a_token_lookup_seeks_both_keys(fixture_conn: sqlite3.Connection) -> None:
    # `where norm = ?` through the view: one seek in token_norms, then that form's rows.
    plan = " ".join(r[3] for r in fixture_conn.execute(
        "explain query plan select section_id, token from tokens where norm = 'payments_db_url'"))
    assert "SEARCH n USING PRIMARY KEY (norm=?)" in plan and "SEARCH r USING PRIMARY KEY (token_id=?)" in plan, plan


def test_token_df_strong_says_what_the_tokens_say(sample_db: Path) -> None:
    """token_df.strong (read by search.sql instead of scanning a common name's rows) is 1 exactly
    when some section holds the token as a kind other than a name or a plain code span."""
    conn = sqlite3.connect(sample_db)
    rows = conn.execute(
        "select strong, exists (select 1 from tokens as t where t.norm = d.norm and t.kind not in ('name', 'code'))"
        " from token_df as d").fetchall()
    assert {a for a, _ in rows} == {0, 1}  # both kinds occur in the sample
    assert all(a == b for a, b in rows)


def test_required_section_columns(fixture_conn: sqlite3.Connection) -> None:
    cols = _columns(fixture_conn, "sections")
    assert [c for c in REQUIRED_SECTION_COLUMNS if c not in cols] == []


def test_fts_declaration(fixture_conn: sqlite3.Connection) -> None:
    (sql,) = fixture_conn.execute("select sql from sqlite_master where name = 'sections_fts'").fetchone()
    # The content is the view that adds title, trail and file words (schema 4); Datasette finds
    # the FTS table of `sections` by `content="sections"` (double quotes) in this text: a comment.
    assert 'content="sections_indexed"' in sql
    assert 'content="sections"' in sql
    assert 'content_rowid="id"' in sql
    assert f'tokenize="{TOKENIZER}"' in sql
    assert TOKENIZER == "porter unicode61 remove_diacritics 2"


def test_pragmas(fixture_conn: sqlite3.Connection, fixture_db: Path) -> None:
    assert fixture_conn.execute("pragma user_version").fetchone()[0] == SCHEMA_VERSION == 7
    assert fixture_conn.execute("pragma application_id").fetchone()[0] == APPLICATION_ID == 0x6D646674
    assert fixture_conn.execute("pragma page_size").fetchone()[0] == 4096
    assert fixture_conn.execute("pragma auto_vacuum").fetchone()[0] == 0
    assert fixture_conn.execute("pragma encoding").fetchone()[0] == "UTF-8"
    header = fixture_db.read_bytes()[:100]
    assert (header[18], header[19]) == (1, 1)  # journal_mode DELETE, never WAL (2, 2)


def test_meta_keys(fixture_conn: sqlite3.Connection) -> None:
    meta = dict(fixture_conn.execute("select key, value from mdfts_meta"))
    required = {"schema_version", "mdfts_version", "source", "content_digest", "documents", "sections",
                "tokens", "tokenizer", "files", "skipped", "sqlite_version", "build_fingerprint"}
    assert required <= set(meta)
    assert set(meta) - required <= {"built_at", "git_commit", "git_ref", "artifact_version"}
    counts = {t: str(fixture_conn.execute(f"select count(*) from {t}").fetchone()[0])
              for t in ("documents", "sections", "tokens")}
    assert {k: meta[k] for k in counts} == counts
    assert (meta["schema_version"], meta["tokenizer"], meta["source"]) == (str(SCHEMA_VERSION), TOKENIZER, "docs")
    assert len(meta["content_digest"]) == 64


def test_every_query_file_is_stored(fixture_conn: sqlite3.Connection) -> None:
    stored = {r[0]: (r[1], json.loads(r[2])) for r in fixture_conn.execute("select name, sql, params from mdfts_queries")}
    files = {p.stem: p.read_text(encoding="utf-8") for p in QUERIES_DIR.glob("*.sql")}
    assert set(stored) == set(files) and "search" in stored
    for name, text in files.items():
        assert stored[name][0] == text.strip() + "\n"
        assert all(f":{p}" in text for p in stored[name][1])


def test_kind_columns_hold_json_arrays_that_match_the_tokens_table(fixture_conn: sqlite3.Connection) -> None:
    by_column: dict[tuple[int, str], set[str]] = {}
    for sid, token, kind in fixture_conn.execute("select section_id, token, kind from tokens"):
        by_column.setdefault((sid, KIND_COLUMNS[kind]), set()).add(token)
    cols = list(KIND_COLUMNS.values())
    for row in fixture_conn.execute(f"select id, {', '.join(cols)} from sections"):
        for col, value in zip(cols, row[1:], strict=True):
            assert value != "[]"  # a kind the section has none of is NULL (schema 2)
            arr = json.loads(value) if value is not None else []
            assert arr == sorted(set(arr))
            assert set(arr) == by_column.get((row[0], col), set())
    assert by_column  # the fixtures do contain tokens


def test_section_links(fixture_conn: sqlite3.Connection) -> None:
    rows = {r["id"]: r for r in fixture_conn.execute("select * from sections_full")}
    for r in rows.values():
        if r["prev_id"] is not None:
            assert rows[r["prev_id"]]["next_id"] == r["id"]
            assert rows[r["prev_id"]]["document_id"] == r["document_id"]
        if r["parent_id"] is not None:
            parent = rows[r["parent_id"]]
            assert parent["level"] < r["level"] and parent["start_line"] < r["start_line"]
            assert json.loads(r["trail"])[:-1] == json.loads(parent["trail"])
        assert r["chars"] == len(r["body"])
        assert r["start_line"] <= r["end_line"]


def test_nesting_fixture_rows(fixture_conn: sqlite3.Connection) -> None:
    rows = fixture_conn.execute(
        "select s.ordinal, s.level, s.heading, s.anchor, s.start_line, s.end_line, p.ordinal, s.trail "
        "from sections_full s left join sections p on p.id = s.parent_id where s.path = 'nesting.md' order by s.ordinal"
    ).fetchall()
    assert [tuple(r) for r in rows] == [
        (0, 1, "Top", "top", 1, 2, None, '["Top"]'),
        (1, 2, "Child a", "child-a", 3, 4, 0, '["Top", "Child a"]'),
        (2, 3, "Grandchild", "grandchild", 5, 6, 1, '["Top", "Child a", "Grandchild"]'),
        (3, 2, "Child b", "child-b", 7, 8, 0, '["Top", "Child b"]'),
        (4, 4, "Skipped a level", "skipped-a-level", 9, 9, 3, '["Top", "Child b", "Skipped a level"]'),
    ]


def test_document_rows(fixture_conn: sqlite3.Connection) -> None:
    row = fixture_conn.execute(
        "select title, front_matter, lines, sections, bytes from documents where path = 'front_matter.md'").fetchone()
    assert tuple(row) == ("Front matter title", '{"owner": "team-a", "title": "Front matter title"}', 10, 3,
                          len((Path(__file__).parent / "fixtures/docs/front_matter.md").read_bytes()))


def test_fts_finds_words_and_token_parts(fixture_conn: sqlite3.Connection) -> None:
    def paths(expr: str) -> set[str]:
        return {r[0] for r in fixture_conn.execute(
            "select s.path from sections_fts f join sections s on s.id = f.rowid where sections_fts match ?", (expr,))}

    assert paths('"rollback"') == {"services/payments.md", "services/payments-worker.md"}
    assert "services/payments.md" in paths('path:"services"')
    assert paths('"cafe"') == paths('"CAFÉ"') == {"diacritics.md"}  # remove_diacritics 2


def test_schema_doc_names_every_table_and_column() -> None:
    doc = (REPO / "docs" / "schema.md").read_text(encoding="utf-8")
    for table, cols in {**TABLES, **VIEWS}.items():
        assert f"`{table}`" in doc, table
        for col in cols:
            assert f"`{col}`" in doc, f"{table}.{col}"


def test_read_only_connection_refuses_writes(fixture_db: Path) -> None:
    conn = connect_ro(fixture_db)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        conn.execute("delete from sections")
    conn.close()


def test_file_is_index_reads_the_header_only(fixture_db: Path, tmp_path: Path) -> None:
    from mdfts.artifact import file_is_index

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x)").connection.close()
    (tmp_path / "notes.md").write_text("# not a database\n")
    assert file_is_index(fixture_db)
    assert not file_is_index(other) and not file_is_index(tmp_path / "notes.md")
    assert not file_is_index(tmp_path / "missing.db")


def build_docs(tmp_path: Path, files: dict[str, str]) -> tuple[Path, list[tuple[SourceText, tuple[Section, ...]]]]:
    """Build `files` (name -> markdown) into x.db; each source with the sections the splitter made."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in files.items():
        (docs / name).write_text(text)
    build_index([docs], tmp_path / "x.db")
    split = []
    for f in discover([docs]):
        src = read_source(f)
        split.append((src, split_sections(src.path, src.text).sections))
    return tmp_path / "x.db", split


def test_generated_columns_give_what_the_splitter_made(tmp_path: Path) -> None:
    # anchor, prev_id, next_id and chars are generated on read (schema 5): other_anchor holds only
    # the anchors lower(replace(heading, ' ', '-')) does not give: punctuation, repeats, capitals
    # SQLite's lower() leaves (it folds ASCII only).
    db, split = build_docs(tmp_path, {
        "a.md": "lead\n\n# Plain Title\n\n## Repeat\n\n## Repeat\n\n## Ünïcode Äpfel\n\n"
                "## `code`, punctuation: (yes)!\n\ntext\n",
        "b.md": "# One section only\n"})
    expected = [(src.path, s.ordinal, s.anchor, len(s.body), s.ordinal > 0, s.ordinal < len(secs) - 1)
                for src, secs in split for s in secs]
    conn = connect_ro(db)
    got = conn.execute(
        "select path, ordinal, anchor, chars, prev_id is not null, next_id is not null from sections order by id"
    ).fetchall()
    assert [tuple(r) for r in got] == expected
    assert conn.execute("select count(*) from sections s join sections p on p.id = s.prev_id "
                        "where p.document_id <> s.document_id or p.ordinal <> s.ordinal - 1").fetchone()[0] == 0
    assert conn.execute("select count(*) from sections s join sections n on n.id = s.next_id "
                        "where n.document_id <> s.document_id or n.ordinal <> s.ordinal + 1").fetchone()[0] == 0
    others = {r[0] for r in conn.execute("select other_anchor from sections where other_anchor is not null")}
    assert others == {"repeat-1", "ünïcode-äpfel", "code-punctuation-yes"}
    assert conn.execute("select distinct typeof(rows_sha256), length(rows_sha256) from documents").fetchall() == [
        ("blob", 32)]
    conn.close()


def test_sha256_and_ancestors_are_generated_as_they_were_stored(tmp_path: Path) -> None:
    # documents.sha256 and sections.ancestors are generated on read (schema 6) from the digest's
    # 32 bytes and the headings packed like the token kinds: the same text schema 5 stored, for
    # headings with quotes, backslashes, the JSON separator, an empty one and non-ASCII letters.
    import hashlib

    db, split = build_docs(tmp_path, {
        "a.md": 'lead\n\n# Top "quoted", back\\slash\n\n## Ünï, "x", y\n\n### Deep\n\n#\n\n'
                "## After empty\n\n#### Four\n",
        "b.md": "# Alone\n"})
    digests = {src.path: hashlib.sha256((tmp_path / "docs" / src.path).read_bytes()).hexdigest() for src, _ in split}
    expected = [(src.path, s.ordinal, json.dumps(list(s.trail[:-1]), ensure_ascii=False) if s.trail[:-1] else None,
                 json.dumps(list(s.trail), ensure_ascii=False))
                for src, secs in split for s in secs]
    conn = connect_ro(db)
    got = conn.execute("select s.path, s.ordinal, s.ancestors, f.trail from sections as s "
                       "join sections_full as f on f.id = s.id order by s.id").fetchall()
    assert [tuple(r) for r in got] == expected
    assert any(a is not None and a.count('", "') >= 1 for _, _, a, _ in expected)  # a trail of two and more
    assert dict(conn.execute("select path, sha256 from documents").fetchall()) == digests
    assert conn.execute("select distinct typeof(sha256_bytes), length(sha256_bytes) from documents").fetchall() == [
        ("blob", 32)]
    conn.close()
