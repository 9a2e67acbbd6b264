"""Read-only guarantees of the artifact: queries cannot write, it opens immutable, a rebuild renamed
into place does not disturb a reader, and hostile query text is cheap and never crashes the CLI."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mdfts.build import build_index
from mdfts.cli import cli
from mdfts.index import open_index
from mdfts.lookup import search
from mdfts.queries import index_queries, package_queries, run_query

DOC = """# Payments

Roll back with `PAYMENTS_DB_URL` set.

## Rollback procedure

Run `deploy --force-with-lease` and watch for E1027.
"""
# Sample values for each parameter a shipped query may take.
PARAMS = {"q": "payments rollback PAYMENTS_DB_URL", "explain": 1, "token": "E1027", "id": 1, "path": "pay.md",
          "anchor": "rollback-procedure", "glob": "*", "limit": 5, "prefix": "pay"}
# What a read-only statement may do (sqlite3 authorizer action codes); anything else is denied.
ALLOWED = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}


@pytest.fixture(scope="module")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    docs = tmp_path_factory.mktemp("docs")
    (docs / "pay.md").write_text(DOC)
    out = tmp_path_factory.mktemp("out") / "index.db"
    build_index([docs], out)
    return out


def _deny_writes(action: int, table: object, *args: object) -> int:
    if action in ALLOWED:
        return sqlite3.SQLITE_OK
    # json_each and the other eponymous virtual tables declare their schema on first use, which
    # the authorizer reports as an UPDATE of sqlite_master; nothing is written to the file.
    if action == sqlite3.SQLITE_UPDATE and table == "sqlite_master":
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and table == "data_version":  # FTS5 reads it, never sets it
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def test_no_shipped_query_can_write(db_path: Path) -> None:
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    db.execute("pragma query_only = 1")
    queries = index_queries(db)
    assert set(queries) == {q.name for q in package_queries()}
    db.set_authorizer(_deny_writes)
    for query in queries.values():
        rows = run_query(db, query, {p: PARAMS[p] for p in query.params})
        assert rows, query.name
    # The guards are live: a writing statement fails on this very connection.
    with pytest.raises(sqlite3.DatabaseError):
        db.execute("delete from documents")
    db.set_authorizer(None)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        db.execute("delete from documents")


def test_artifact_opens_immutable_and_stays_untouched(db_path: Path) -> None:
    before = hashlib.sha256(db_path.read_bytes()).hexdigest()
    header = db_path.read_bytes()[:20]
    assert (header[18], header[19]) == (1, 1)  # rollback journal, not WAL: no -wal/-shm for readers
    db = open_index(db_path)
    assert search(db, "rollback")[0]["heading"] == "Rollback procedure"
    db.close()
    sqlite3_bin = shutil.which("sqlite3")
    if sqlite3_bin:
        done = subprocess.run([sqlite3_bin, f"file:{db_path}?immutable=1", "select count(*) from sections"],
                              capture_output=True, text=True, check=True)
        assert done.stdout == "2\n"
    assert sorted(p.name for p in db_path.parent.iterdir()) == ["index.db"]
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize("uri", ["?mode=ro&immutable=1", "?mode=ro"])
def test_reader_keeps_the_old_file_across_a_rebuild(tmp_path: Path, uri: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(300):
        (docs / f"old{i:03}.md").write_text(f"# Old {i}\n\n" + "old words here " * 200 + "\n")
    out = tmp_path / "index.db"
    build_index([docs], out)
    reader = sqlite3.connect(f"file:{out}{uri}", uri=True)
    reader.execute("pragma cache_size = 1")  # read pages from the file, not from a warm cache
    cur = reader.execute("select path, body from sections order by id")
    first = cur.fetchmany(10)

    shutil.rmtree(docs)
    docs.mkdir()
    (docs / "new.md").write_text("# New\n\nnew words\n")
    build_index([docs], out)  # renamed over the file the reader has open

    rest = cur.fetchall()
    assert [p for p, _ in first + rest] == [f"old{i:03}.md" for i in range(300)]
    assert all(body.startswith("# Old") for _, body in rest)
    assert reader.execute("select count(*) from sections").fetchone()[0] == 300
    reader.close()
    fresh = sqlite3.connect(f"file:{out}{uri}", uri=True)
    assert fresh.execute("select path from sections").fetchall() == [("new.md",)]


@pytest.mark.parametrize(
    "text",
    [" ".join(f"term{i} PAYMENTS_DB_URL --flag-{i}" for i in range(1000)), "rollback " * 12_000, "x" * 100_000],
    ids=["1000-terms", "100kb-words", "100kb-one-word"],
)
def test_huge_query_text_returns_promptly(db_path: Path, text: str) -> None:
    db = open_index(db_path)
    started = time.perf_counter()
    search(db, text)
    took = time.perf_counter() - started
    # Measured at 2-100 ms on a 63,200-section index (docs/bad-input.md); the bound only catches runaway cost.
    assert took < 10


@pytest.mark.parametrize(
    "args",
    [
        ["search", "\ud800 rollback"],
        ["search", "\udcff", "--json"],
        ["token", "\ud800"],
        ["show", "pay.md#\udcff"],
        ["context", "\udfff why"],
        ["query", "outline", "-p", "path=\ud800"],
        ["query", "documents", "-p", "limit=ten"],
    ],
    ids=["search", "search-json", "token", "show", "context", "query-param", "query-bad-limit"],
)
def test_hostile_query_text_never_crashes_the_cli(db_path: Path, args: list[str]) -> None:
    result = CliRunner().invoke(cli, [args[0], str(db_path), *args[1:]])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code in (0, 1)
    if result.exit_code == 1:
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1
