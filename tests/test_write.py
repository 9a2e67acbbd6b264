"""The artifact: sound, deterministic, replaced atomically, and readable from read-only places."""

from __future__ import annotations

import hashlib
import json
import os
import random
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


def test_loading_sections_without_generated_columns_leaves_no_trace(tmp_path: Path, fixture_db: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # The rows go into a sections declared with its stored columns only; finish() puts schema.sql's
    # definition and the schema cookie back, so the index is the bytes of a build without the swap.
    with IndexWriter(tmp_path / "loading.db") as writer:
        stored = [r[1] for r in writer.db.execute("pragma table_xinfo(sections)")]
        writer.abort()
    assert "text" not in stored and "body" in stored and stored[0] == "id"
    monkeypatch.setattr("mdfts.write.LOAD_STORED_ONLY", False)
    plain = tmp_path / "no-swap.db"
    build_index([FIXTURE_DOCS], plain)
    assert _sha256(plain) == _sha256(fixture_db)
    fresh = sqlite3.connect(":memory:")
    fresh.executescript((Path(__file__).parents[1] / "builder" / "schema.sql").read_text(encoding="utf-8"))
    conn = sqlite3.connect(fixture_db.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        [want, got] = [c.execute("select sql from sqlite_schema where name = 'sections'").fetchone() for c in (fresh, conn)]
        assert got == want
    finally:
        conn.close()
        fresh.close()


def _sizes_by_page_size(db: Path, tmp_path: Path) -> dict[int, int]:
    """The file VACUUM INTO writes from `db` in each page size: size -> bytes."""
    sizes = {}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        for size in (4096, 8192, 16384):
            out = tmp_path / f"{db.stem}-{size}.db"
            conn.execute(f"pragma page_size = {size}")
            conn.execute("vacuum into ?", (str(out),))
            sizes[size] = out.stat().st_size
    finally:
        conn.close()
    return sizes


def _page_size(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("pragma page_size").fetchone()[0])
    finally:
        conn.close()


def test_the_index_takes_the_page_size_that_wastes_least(tmp_path: Path, fixture_db: Path) -> None:
    # Sections of ~2.5 KB go one to a 4 KiB page (1.5 KB left over) and three to an 8 KiB one:
    # 8 KiB pages make this index smaller, though its docs are only 0.2 MB.
    rng = random.Random(0)
    lines = [f"# Notes\n\n## Part {i}\n\n" + "".join(
        " ".join(f"word{rng.randrange(400)}" for _ in range(10)) + ".\n" for _ in range(31))
        for i in range(80)]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "rows.db"
    build_index([docs], out)
    sizes = _sizes_by_page_size(out, tmp_path)
    assert _page_size(out) == 8192
    assert out.stat().st_size == min(sizes.values()) < sizes[4096]
    # The small fixture keeps 4 KiB pages: every table takes a page at least.
    assert _page_size(fixture_db) == 4096
    assert fixture_db.stat().st_size == min(_sizes_by_page_size(fixture_db, tmp_path).values())
    # The choice reads the rows only: the same bytes again, and from a build reusing them.
    again, reused = tmp_path / "again.db", tmp_path / "reused.db"
    build_index([docs], again)
    build_index([docs], reused, previous=out)
    assert _sha256(again) == _sha256(reused) == _sha256(out)
    assert _listing(tmp_path) == sorted(["docs", "rows.db", "again.db", "reused.db", *(
        f"{stem}-{size}.db" for stem in ("rows", "fixtures") for size in sizes)])


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


def test_output_that_is_a_symlink_is_replaced_by_the_index(tmp_path: Path) -> None:
    """-o LINK writes the index where the link was (one rename, as for any output) and leaves the
    file it pointed to alone: a build never writes through a link into another place."""
    target = tmp_path / "releases" / "v1.db"
    target.parent.mkdir()
    build_index([FIXTURE_DOCS], target)
    before = target.read_bytes()
    link = tmp_path / "current.db"
    link.symlink_to(target)
    build_index([FIXTURE_DOCS / "services"], link)
    assert not link.is_symlink() and link.is_file()
    assert target.read_bytes() == before
    with sqlite3.connect(link) as db:
        assert db.execute("select count(*) from documents").fetchone()[0] < len(list(FIXTURE_DOCS.rglob("*.md")))


@pytest.mark.parametrize(
    "items",
    [[], ["plain"], ['say "hi"', "back\\slash", "tab\tnew\nline\x00\x1f", "ünï ☃ 𝄞", "\ud800 lone", "/</script>"]],
    ids=["empty", "one", "escapes"],
)
def test_json_strings_spell_what_the_encoder_does(items: list[str]) -> None:
    # The rows and their digest (documents.rows_sha256) hold this text: a byte of difference
    # changes every index and makes `build --previous` reject older ones.
    assert _json_strings(items) == json.dumps(items, ensure_ascii=False)


@pytest.mark.parametrize(
    "values",
    [[], [0, None, True, False, -3, 2**70, 1.5, 1e300, float("inf")], [7, 'say "hi"', "ünï ☃ 𝄞", "\ud800 lone",
     "tab\tnew\nline\x00", ("a", 1), ["x", [None]], {"k": "v"}]],
    ids=["empty", "numbers", "strings"],
)
def test_the_digest_records_encoder_spells_what_the_encoder_does(values: list[object]) -> None:
    # documents.rows_sha256 is defined on JSONEncoder(ensure_ascii=False).encode's text.
    from mdfts.write import _list_to_json, _to_json

    assert _list_to_json(values) == _to_json(values) == json.dumps(values, ensure_ascii=False)


def test_the_digest_records_encoder_refuses_what_json_cannot_spell() -> None:
    # build --previous reads a blob edited into an old row as a digest mismatch through this TypeError
    from mdfts.write import _list_to_json

    with pytest.raises(TypeError):
        _list_to_json([1, b"blob"])



def test_a_second_source_of_a_token_is_dropped_as_before() -> None:
    # kind and source share token_rows.kind_source, so the key no longer drops a second row of
    # the same (norm, token, kind) with another source: the writer keeps the first, as the key did.
    from mdfts.sections import Section
    from mdfts.tokens import ExactToken
    from mdfts.write import _section_values

    rows: list[tuple[str, int, str, int]] = []
    for ordinal, tokens in enumerate([[("X", "identifier", "code"), ("X", "identifier", "text"), ("X", "name", "text")],
                                      [("x", "identifier", "text")]]):
        section = Section("a.md", ordinal, 1, "A", ("A",), "a", 1, 1, None, "# A\n", "",
                          tuple(ExactToken(*t) for t in tokens))
        _section_values("a.md", "a", section, ordinal == 1, rows)
    assert rows == [("x", 0, "^", 6 * 5 + 2), ("x", 0, "^", 7 * 5 + 4), ("x", 1, "", 6 * 5 + 4)]
