"""`build --previous`: unchanged documents are copied from the old index, and the file equals a full build."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import mdfts.build
from mdfts.artifact import SCHEMA_VERSION
from mdfts.build import build_index
from mdfts.cli import cli
from mdfts.discover import SourceText

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "incremental"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    dst = tmp_path / "docs"
    shutil.copytree(FIXTURES, dst)
    return dst


@pytest.fixture
def old_db(docs: Path, tmp_path: Path) -> Path:
    out = tmp_path / "old.db"
    build_index([docs], out)
    return out


def _change(docs: Path) -> None:
    # One more section in the second file: every later section id moves by one.
    with (docs / "guides" / "deploy.md").open("a", encoding="utf-8") as fh:
        fh.write("\n## Canary\n\nSet `CANARY_PERCENT` first.\n")


def _add(docs: Path) -> None:
    (docs / "guides" / "alerts.md").write_text("# Alerts\n\n## Paging\n\nPage with `--urgent`.\n", encoding="utf-8")


def _delete(docs: Path) -> None:
    (docs / "index.md").unlink()


def _rename(docs: Path) -> None:
    (docs / "guides" / "setup.md").rename(docs / "guides" / "zz-setup.md")


def _shrink(docs: Path) -> None:
    (docs / "guides" / "setup.md").write_text("# Setup\n\nNothing left.\n", encoding="utf-8")


def _all(docs: Path) -> None:
    for edit in (_change, _add, _delete, _rename):
        edit(docs)


@pytest.mark.parametrize(
    ("edit", "reused"),
    [
        (lambda docs: None, 5),
        (_change, 4),
        (_add, 5),
        (_delete, 4),
        (_rename, 4),
        (_shrink, 4),
        (_all, 2),
    ],
    ids=["unchanged", "changed", "added", "deleted", "renamed", "shrunk", "all-at-once"],
)
def test_incremental_equals_full_build(
    docs: Path, old_db: Path, tmp_path: Path, edit: Callable[[Path], None], reused: int
) -> None:
    edit(docs)
    full = build_index([docs], tmp_path / "full.db")
    inc = build_index([docs], tmp_path / "inc.db", previous=old_db)
    assert inc.reused == reused
    assert full.reused == 0
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")


def test_reused_documents_are_not_parsed(docs: Path, old_db: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    _change(docs)
    parsed: list[str] = []
    real = mdfts.build._document

    def spy(src: SourceText, *args: Any, **kwargs: Any) -> Any:
        parsed.append(src.path)
        return real(src, *args, **kwargs)

    monkeypatch.setattr(mdfts.build, "_document", spy)
    build_index([docs], tmp_path / "inc.db", previous=old_db)
    assert parsed == ["guides/deploy.md"]


def test_previous_may_be_the_output_itself(docs: Path, old_db: Path, tmp_path: Path) -> None:
    _all(docs)
    build_index([docs], tmp_path / "full.db")
    result = build_index([docs], old_db, previous=old_db)
    assert result.reused == 2
    assert _sha(old_db) == _sha(tmp_path / "full.db")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "full.db", "old.db"]  # no temp files left


def test_previous_is_left_untouched(docs: Path, old_db: Path, tmp_path: Path) -> None:
    before = _sha(old_db)
    _all(docs)
    build_index([docs], tmp_path / "inc.db", previous=old_db)
    assert _sha(old_db) == before


def _other_schema(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        conn.execute("pragma user_version = 99")
    return f"schema 99, this mdfts reads {SCHEMA_VERSION}; rebuild it"


def _other_mdfts(db: Path) -> str:
    with sqlite3.connect(db) as conn:
        conn.execute("update mdfts_meta set value = '0.0.1' where key = 'mdfts_version'")
    return f"built by mdfts 0.0.1, this is {mdfts.build._version()}"


def _not_sqlite(db: Path) -> str:
    db.write_bytes(b"not a database at all, just bytes" * 200)
    return "not an SQLite database (file is not a database)"


def _other_sqlite(db: Path) -> str:
    db.unlink()
    with sqlite3.connect(db) as conn:
        conn.execute("create table documents (id integer primary key)")
    return "not an mdfts index (application_id 0); build one with mdfts build"


def _missing(db: Path) -> str:
    db.unlink()
    return "no such index file"


@pytest.mark.parametrize(
    "spoil", [_other_schema, _other_mdfts, _not_sqlite, _other_sqlite, _missing],
    ids=["other-schema", "other-mdfts-version", "not-sqlite", "other-sqlite-file", "missing"],
)
def test_unusable_previous_warns_and_builds_everything(
    docs: Path, old_db: Path, tmp_path: Path, spoil: Callable[[Path], str]
) -> None:
    why = spoil(old_db)
    _change(docs)
    build_index([docs], tmp_path / "full.db")
    out = tmp_path / "inc.db"
    result = CliRunner().invoke(cli, ["build", str(docs), "-o", str(out), "--previous", str(old_db), "-q"])
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == f"Warning: {old_db}: {why}; not reusing it, building everything\n"
    assert _sha(out) == _sha(tmp_path / "full.db")


def test_cli_reports_reused_documents(docs: Path, old_db: Path, tmp_path: Path) -> None:
    _change(docs)
    out = tmp_path / "inc.db"
    result = CliRunner().invoke(cli, ["build", str(docs), "-o", str(out), "--previous", str(old_db)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"{out}: 5 documents, ")
    assert result.stderr.rstrip().endswith(f"; 4 reused from {old_db}")


def test_skipped_file_is_not_reused(docs: Path, old_db: Path, tmp_path: Path) -> None:
    (docs / "guides" / "deploy.md").write_bytes(b"# Deploy\n\xff\n")
    full = build_index([docs], tmp_path / "full.db", on_error="skip")
    inc = build_index([docs], tmp_path / "inc.db", on_error="skip", previous=old_db)
    assert (full.skipped, inc.skipped, inc.reused) == (["guides/deploy.md"], ["guides/deploy.md"], 4)
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")


# -- a previous index is verified, never trusted (issue #16) -------------------------------------

def _warnings_of(docs: Path, out: Path, previous: Path) -> tuple[list[str], int]:
    said: list[str] = []
    result = build_index([docs], out, previous=previous, warn=said.append)
    return said, result.reused


def _tamper_body(db_path: Path) -> None:
    with sqlite3.connect(db_path) as db:
        db.execute("update sections set body = replace(body, 'Set', 'Unset') where path = 'guides/setup.md'")
    assert "Unset" in db_path.read_bytes().decode("utf-8", "replace")


@pytest.mark.parametrize("workers", ["1", "2"], ids=["checked-here", "checked-aside"])
def test_tampered_rows_are_not_copied(docs: Path, old_db: Path, tmp_path: Path, workers: str,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Edited rows were copied as they were, and the result passed integrity_check with the same
    # content_digest as a clean build. The check runs in a worker process beside the build, or
    # here with MDFTS_WORKERS=1: either way the index is not replaced by the reusing build.
    monkeypatch.setenv("MDFTS_WORKERS", workers)
    _tamper_body(old_db)
    before = _sha(old_db)
    said, reused = _warnings_of(docs, tmp_path / "inc.db", old_db)
    assert said == [f"{old_db}: the rows of guides/setup.md do not match their digest; not reusing it, "
                    "building everything"]
    assert reused == 0
    build_index([docs], tmp_path / "full.db")
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")
    assert _sha(old_db) == before


@pytest.mark.parametrize("what", ["tokens", "title", "path", "ids", "anchor", "blob-body", "blob-token",
                                  "kind-code", "duplicate-token", "token-number", "token-section", "parent"])
def test_other_tampering_is_caught_too(docs: Path, old_db: Path, tmp_path: Path, what: str) -> None:
    sql = {
        "tokens": "update token_rows set kind_source = kind_source - 2 where kind_source % 5 = 2",  # code → heading
        # a value JSON cannot spell (text columns keep a blob as it is)
        "blob-body": "update sections set body = cast(body as blob) where path = 'guides/setup.md'",
        "blob-token": "update token_norms set norm = cast(norm as blob) where id = 1",
        "kind-code": "update token_rows set kind_source = 99 where token_id = 1",  # kind NULL
        # a second row that reads as the same token (written = norm spells it too): never hidden
        "duplicate-token": "insert into token_rows select r.token_id, r.section_id, n.norm, r.kind_source "
                           "from token_rows as r join token_norms as n on n.id = r.token_id where r.written = '' limit 1",
        # a row whose form is another token's (the numbers are positions, nothing checks them but the digest)
        "token-number": "update token_rows set token_id = token_id + 1 where token_id = 1",
        # a token moved to the next section, and a parent that names a sibling: the check reads
        # both by id (write._REUSED_TOKENS, _REUSED_SECTIONS), so an id must be checked as such
        "token-section": "update token_rows set section_id = section_id + 1 where token_id = 1",
        "parent": "update sections set parent_id = parent_id + 1 where parent_id is not null",
        "title": "update documents set title = 'Other' where path = 'guides/setup.md'",
        "path": "update sections set path = 'other.md' where ordinal = 1",
        # next_id is generated from is_last (schema 5): a first section that says it is the last
        "ids": "update sections set is_last = 1 where is_last = 0 and ordinal = 0",
        "anchor": "update sections set other_anchor = 'elsewhere' where ordinal = 1",
    }[what]
    with sqlite3.connect(old_db) as db:
        assert db.execute(sql).rowcount > 0
    said, reused = _warnings_of(docs, tmp_path / "inc.db", old_db)
    assert len(said) == 1 and "do not match their digest" in said[0] and reused == 0
    build_index([docs], tmp_path / "full.db")
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")


def test_an_older_parsers_index_is_not_reused(docs: Path, old_db: Path, tmp_path: Path) -> None:
    # The version string stayed 0.1.0 across parser changes; the fingerprint does not.
    with sqlite3.connect(old_db) as db:
        db.execute("update mdfts_meta set value = 'older' where key = 'build_fingerprint'")
    said, reused = _warnings_of(docs, tmp_path / "inc.db", old_db)
    assert len(said) == 1 and said[0].startswith(f"{old_db}: built by another parser (build fingerprint older, ")
    assert reused == 0
    build_index([docs], tmp_path / "full.db")
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")


class _EditedPackage:
    """importlib.resources.files("mdfts") with one file's source edited, as a fix would."""

    def __init__(self, package: Any, edited: str) -> None:
        self.package, self.edited = package, edited

    def joinpath(self, name: str) -> Any:
        source = self.package.joinpath(name)
        if name != self.edited:
            return source
        edited = source.read_bytes() + b"\n# a fix that kept the version string\n"
        return type("EditedFile", (), {"read_bytes": lambda self: edited})()


@pytest.mark.parametrize("module", ["build.py", "discover.py", "parse.py", "sections.py", "tokens.py", "write.py"])
def test_a_fix_to_a_module_that_makes_rows_changes_the_fingerprint(monkeypatch: pytest.MonkeyPatch,
                                                                   module: str) -> None:
    # build.py's _document runs parse, split and tokens on a file's text: a fix there kept the
    # fingerprint, and --previous copied the rows the older code had made.
    import importlib.resources

    mdfts.build.build_fingerprint.cache_clear()
    before = mdfts.build.build_fingerprint()
    package = importlib.resources.files("mdfts")
    monkeypatch.setattr(importlib.resources, "files", lambda _name: _EditedPackage(package, module))
    mdfts.build.build_fingerprint.cache_clear()
    try:
        assert mdfts.build.build_fingerprint() != before
    finally:
        mdfts.build.build_fingerprint.cache_clear()


def test_another_python_changes_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    # Rows read Python's Unicode tables (str methods, re) and its tomllib: an index built by
    # another minor version is not reused, though mdfts and its parsers are the same.
    mdfts.build.build_fingerprint.cache_clear()
    before = mdfts.build.build_fingerprint()
    assert mdfts.build._runtime().startswith(f"python {sys.version_info[0]}.{sys.version_info[1]} unicode ")
    monkeypatch.setattr(mdfts.build, "_runtime", lambda: "python 3.99 unicode 99.0.0")
    mdfts.build.build_fingerprint.cache_clear()
    try:
        assert mdfts.build.build_fingerprint() != before
    finally:
        mdfts.build.build_fingerprint.cache_clear()


def test_a_wal_beside_the_previous_index_is_neither_read_nor_checkpointed(docs: Path, old_db: Path,
                                                                          tmp_path: Path) -> None:
    # The old file was attached read-write: a -wal beside it was read, then checkpointed into it.
    prev = tmp_path / "wal.db"
    shutil.copy(old_db, prev)
    writer = sqlite3.connect(prev, isolation_level=None)
    writer.execute("pragma journal_mode = wal")
    writer.execute("pragma wal_autocheckpoint = 0")
    writer.execute("update sections set body = 'from the wal' where path = 'guides/setup.md'")
    saved = {p.name: p.read_bytes() for p in (prev, tmp_path / "wal.db-wal")}
    writer.close()  # checkpoints: put the un-checkpointed state back
    for name, data in saved.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "wal.db-shm").unlink(missing_ok=True)
    said, reused = _warnings_of(docs, tmp_path / "inc.db", prev)
    assert (said, reused) == ([], 5)  # the main file is intact, so its rows are reused
    build_index([docs], tmp_path / "full.db")
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")
    assert {p.name: p.read_bytes() for p in (prev, tmp_path / "wal.db-wal")} == saved


def _bad_page(db_path: Path) -> None:
    # Garbage over a page in the middle of the sections table's b-tree.
    with sqlite3.connect(db_path) as db:
        page = db.execute("select max(pageno) from dbstat where name = 'sections'").fetchone()[0]
    data = bytearray(db_path.read_bytes())
    data[(page - 1) * 4096 : page * 4096] = b"\xa5" * 4096
    db_path.write_bytes(bytes(data))


def _truncate(db_path: Path) -> None:
    data = db_path.read_bytes()
    db_path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("damage", [_bad_page, _truncate], ids=["bad-page", "truncated"])
def test_a_damaged_previous_index_means_a_full_build(docs: Path, old_db: Path, tmp_path: Path,
                                                     damage: Callable[[Path], None]) -> None:
    # One bad page failed the build instead of falling back to a full one.
    damage(old_db)
    before = _sha(old_db)
    said, reused = _warnings_of(docs, tmp_path / "inc.db", old_db)
    assert len(said) == 1 and said[0].endswith("; not reusing it, building everything"), said
    assert reused == 0
    build_index([docs], tmp_path / "full.db")
    assert _sha(tmp_path / "inc.db") == _sha(tmp_path / "full.db")
    assert _sha(old_db) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "full.db", "inc.db", "old.db"]
