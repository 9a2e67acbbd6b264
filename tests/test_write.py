"""The artifact: sound, deterministic, replaced atomically, and readable from read-only places."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from mdfts.build import build_index
from mdfts.errors import MdftsError
from mdfts.write import IndexWriter, _json_strings

from conftest import FIXTURE_DOCS, require_sqlite3_binary


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_integrity(fixture_db: Path) -> None:
    conn = sqlite3.connect(fixture_db.resolve().as_uri() + "?mode=ro", uri=True)
    assert conn.execute("pragma integrity_check").fetchall() == [("ok",)]
    assert conn.execute("pragma foreign_key_check").fetchall() == []
    conn.close()
    # FTS5's own check writes nothing, but SQLite needs a writable handle to run the command.
    copy = fixture_db.parent / "integrity-copy.db"
    shutil.copyfile(fixture_db, copy)
    rw = sqlite3.connect(copy)
    rw.execute("insert into sections_fts(sections_fts, rank) values ('integrity-check', 1)")
    rw.close()
    copy.unlink()


def test_two_builds_are_byte_identical(tmp_path: Path, fixture_db: Path, docs_dir: Path) -> None:
    again = tmp_path / "again.db"
    build_index([FIXTURE_DOCS], again)
    assert _sha256(again) == _sha256(fixture_db)
    # A copy of the docs in another folder (same folder name) gives the same bytes too:
    # no absolute path, mtime or wall-clock time goes into the file.
    # (Both copies are outside any git checkout: a build inside one records its commit.)
    first = tmp_path / "first.db"
    build_index([docs_dir], first)
    other = tmp_path / "elsewhere" / docs_dir.name
    shutil.copytree(docs_dir, other)
    os.utime(other / "nesting.md", (1, 1))
    elsewhere = tmp_path / "elsewhere" / "copy.db"
    build_index([other], elsewhere)
    assert _sha256(elsewhere) == _sha256(first)


def test_the_build_files_page_size_leaves_no_trace(tmp_path: Path, fixture_db: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    # A build of many files puts its rows in big pages first (cheaper inserts); VACUUM INTO then
    # writes the index in 4 KiB ones, the same bytes as a build of few files.
    monkeypatch.setattr("mdfts.write.BIG_PAGES_FROM", 1)
    big = tmp_path / "big-pages.db"
    build_index([FIXTURE_DOCS], big)
    assert _sha256(big) == _sha256(fixture_db)
    with IndexWriter(tmp_path / "pages.db", files=1) as writer:
        assert writer.db.execute("pragma page_size").fetchone()[0] == 65536
        writer.abort()


def test_big_docs_get_big_pages(tmp_path: Path, fixture_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Docs of BIG_INDEX_FROM bytes or more get 16 KiB pages (less slack); the rows are the same.
    monkeypatch.setattr("mdfts.write.BIG_INDEX_FROM", 1)
    big = tmp_path / "big-index.db"
    build_index([FIXTURE_DOCS], big)
    conns = [sqlite3.connect(f"file:{p}?mode=ro", uri=True) for p in (fixture_db, big)]
    try:
        assert [c.execute("pragma page_size").fetchone()[0] for c in conns] == [4096, 16384]
        dump = [list(c.iterdump()) for c in conns]
        assert dump[0] == dump[1] and len(dump[0]) > 100
    finally:
        for c in conns:
            c.close()
    again = tmp_path / "again.db"
    build_index([FIXTURE_DOCS], again)
    assert _sha256(again) == _sha256(big)


def test_source_date_epoch_is_the_only_build_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    build_index([FIXTURE_DOCS], a)
    build_index([FIXTURE_DOCS], b)
    assert _sha256(a) == _sha256(b)
    conn = sqlite3.connect(a)
    assert conn.execute("select value from mdfts_meta where key = 'built_at'").fetchone() == ("1700000000",)
    conn.close()


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"# ok\n\xff\n", "bad.md:2: not valid UTF-8"),
        (b"---\ntitle: [\n---\n# ok\n", "bad.md:2: front matter is not valid YAML"),
        (b"# ok\0\n", "bad.md:1: binary file (NUL byte), not markdown"),
    ],
    ids=["bad-utf8", "bad-front-matter", "binary"],
)
def test_failed_build_keeps_the_old_file(docs_dir: Path, built_db: Path, content: bytes, error: str) -> None:
    before = built_db.read_bytes()
    (docs_dir / "bad.md").write_bytes(content)
    with pytest.raises(MdftsError) as err:
        build_index([docs_dir], built_db)
    assert str(err.value) == error
    assert built_db.read_bytes() == before
    assert _listing(built_db.parent) == ["index.db"]


def test_skip_turns_a_bad_file_into_a_warning(docs_dir: Path, tmp_path: Path) -> None:
    (docs_dir / "bad.md").write_bytes(b"# ok\n\xff\n")
    warnings: list[str] = []
    result = build_index([docs_dir], tmp_path / "skip.db", on_error="skip", warn=warnings.append)
    assert (result.skipped, warnings) == (["bad.md"], ["bad.md:2: not valid UTF-8; skipped"])
    conn = sqlite3.connect(tmp_path / "skip.db")
    assert conn.execute("select count(*) from documents where path = 'bad.md'").fetchone() == (0,)
    assert conn.execute("select value from mdfts_meta where key = 'skipped'").fetchone() == ("1",)
    conn.close()


@pytest.mark.parametrize("exc", [RuntimeError("boom"), KeyboardInterrupt()], ids=["error", "ctrl-c"])
def test_interrupted_build_leaves_no_temp_file(built_db: Path, docs_dir: Path, exc: BaseException,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    before = built_db.read_bytes()

    def fail(self: IndexWriter, *args: object) -> None:
        raise exc

    monkeypatch.setattr(IndexWriter, "finish", fail)
    with pytest.raises(type(exc)):
        build_index([docs_dir], built_db)
    assert built_db.read_bytes() == before
    assert _listing(built_db.parent) == ["index.db"]


def test_stale_temp_of_a_dead_build_is_removed(built_db: Path, docs_dir: Path) -> None:
    stale = built_db.with_name(f".{built_db.name}.999999999.tmp")  # no such process
    stale.write_bytes(b"half a database")
    build_index([docs_dir], built_db)
    assert _listing(built_db.parent) == ["index.db"]


def test_output_inside_the_source_is_not_indexed(docs_dir: Path) -> None:
    out = docs_dir / "index.md"  # a name the default globs would pick up
    build_index([docs_dir], out)
    result = build_index([docs_dir], out)  # second build: the old output is there now
    conn = sqlite3.connect(out)
    assert conn.execute("select count(*) from documents where path = 'index.md'").fetchone() == (0,)
    conn.close()
    assert result.files == len(list(FIXTURE_DOCS.rglob("*.md")))


@pytest.fixture
def read_only_db(fixture_db: Path, tmp_path: Path) -> Iterator[Path]:
    """A copy of the index in a folder with no write permission (root ignores it: we also
    check that no file appears)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "index.db"
    shutil.copyfile(fixture_db, db)
    db.chmod(0o444)
    folder.chmod(0o555)
    yield db
    folder.chmod(0o755)


QUERY = "select count(*) from sections_fts where sections_fts match 'rollback'"


@pytest.mark.parametrize("how", ["mode=ro", "immutable=1", "mode=ro&immutable=1"])
def test_read_only_folder_python(read_only_db: Path, how: str) -> None:
    before = _listing(read_only_db.parent)
    conn = sqlite3.connect(f"{read_only_db.resolve().as_uri()}?{how}", uri=True)
    assert conn.execute(QUERY).fetchone() == (2,)
    conn.close()
    assert _listing(read_only_db.parent) == before == ["index.db"]


@pytest.mark.parametrize(
    "args",
    [["-readonly", "{db}"], ["{uri}?immutable=1"], ["-readonly", "{uri}?mode=ro"]],
    ids=["readonly", "immutable", "mode-ro"],
)
def test_read_only_folder_sqlite3_shell(read_only_db: Path, args: list[str]) -> None:
    shell = require_sqlite3_binary()
    fill = {"db": str(read_only_db), "uri": read_only_db.resolve().as_uri()}
    out = subprocess.run([shell, *(a.format(**fill) for a in args), QUERY],
                         capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout == "2\n"
    assert _listing(read_only_db.parent) == ["index.db"]


def test_output_that_is_a_folder_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "out.db").mkdir()
    with pytest.raises(MdftsError) as err:
        build_index([FIXTURE_DOCS], tmp_path / "out.db")
    assert str(err.value) == f"{tmp_path / 'out.db'}: is a folder, not a file"


@pytest.mark.parametrize(
    "items",
    [[], ["plain"], ['say "hi"', "back\\slash", "tab\tnew\nline\x00\x1f", "ünï ☃ 𝄞", "\ud800 lone", "/</script>"]],
    ids=["empty", "one", "escapes"],
)
def test_json_strings_spell_what_the_encoder_does(items: list[str]) -> None:
    # The rows and their digest (documents.rows_sha256) hold this text: a byte of difference
    # changes every index and makes `build --previous` reject older ones.
    assert _json_strings(items) == json.dumps(items, ensure_ascii=False)



def test_a_second_source_of_a_token_is_dropped_as_before() -> None:
    # kind and source share token_rows.kind_source, so the key no longer drops a second row of
    # the same (norm, token, kind) with another source: the writer keeps the first, as the key did.
    from mdfts.write import _stored_tokens

    rows = _stored_tokens([("x", 0, "X", "identifier", "code"), ("x", 0, "X", "identifier", "text"),
                           ("x", 0, "X", "name", "text"), ("x", 1, "x", "identifier", "text")], first=10)
    assert rows == [("x", 10, "^", 6 * 5 + 2), ("x", 10, "^", 7 * 5 + 4), ("x", 11, "", 6 * 5 + 4)]
