"""The same input gives the same bytes: no absolute paths, no wall-clock time, sorted input."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from mdfts.build import build_index
from mdfts.cli import cli

from gitrepo import EPOCH, FIXTURE_TREE, git, isolate, make_repo


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_two_folders_give_identical_bytes(tmp_path: Path) -> None:
    one, two = tmp_path / "a" / "docs", tmp_path / "b" / "deeper" / "docs"
    shutil.copytree(FIXTURE_TREE, one)
    shutil.copytree(FIXTURE_TREE, two)

    build_index([one], tmp_path / "a" / "out.db")
    build_index([two], tmp_path / "b" / "elsewhere.db")

    assert _sha256(tmp_path / "a" / "out.db") == _sha256(tmp_path / "b" / "elsewhere.db")


def test_two_clones_of_one_commit_give_identical_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs_a = make_repo(tmp_path / "first")
    docs_b = make_repo(tmp_path / "second" / "checkout")
    assert git(docs_a, "rev-parse", "HEAD") == git(docs_b, "rev-parse", "HEAD")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", git(docs_a, "log", "-1", "--format=%ct"))

    build_index([docs_a], tmp_path / "a.db")
    build_index([docs_b], tmp_path / "b.db")

    assert _sha256(tmp_path / "a.db") == _sha256(tmp_path / "b.db")
    with sqlite3.connect(tmp_path / "a.db") as con:
        meta = dict(con.execute("select key, value from mdfts_meta"))
        commits = {c for (c,) in con.execute("select last_commit from documents")}
    assert (meta["built_at"], meta["git_commit"]) == (str(EPOCH), git(docs_a, "rev-parse", "HEAD"))
    assert commits == {meta["git_commit"]}


def test_file_holds_no_absolute_path(tmp_path: Path) -> None:
    docs = make_repo(tmp_path / "unlikely-folder-name")

    build_index([docs], tmp_path / "out.db")

    data = (tmp_path / "out.db").read_bytes()
    assert str(tmp_path).encode() not in data
    assert b"unlikely-folder-name" not in data


def test_file_order_on_disk_does_not_matter(tmp_path: Path) -> None:
    # Create the same files in opposite orders: directory listing order differs, bytes must not.
    names = sorted(p.relative_to(FIXTURE_TREE) for p in FIXTURE_TREE.rglob("*.md"))
    for folder, order in (("fwd", names), ("rev", names[::-1])):
        for rel in order:
            (tmp_path / folder / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(FIXTURE_TREE / rel, tmp_path / folder / rel)
        build_index([tmp_path / folder], tmp_path / f"{folder}.db", source_name="docs")

    assert _sha256(tmp_path / "fwd.db") == _sha256(tmp_path / "rev.db")


def test_built_at_comes_only_from_source_date_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(FIXTURE_TREE, tmp_path / "docs")
    build_index([tmp_path / "docs"], tmp_path / "plain.db")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1234567890")
    build_index([tmp_path / "docs"], tmp_path / "dated.db")

    with sqlite3.connect(tmp_path / "plain.db") as plain, sqlite3.connect(tmp_path / "dated.db") as dated:
        assert plain.execute("select value from mdfts_meta where key = 'built_at'").fetchall() == []
        assert dated.execute("select value from mdfts_meta where key = 'built_at'").fetchall() == [("1234567890",)]


def test_bad_source_date_epoch_is_one_line_error(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE_TREE, tmp_path / "docs")

    result = CliRunner().invoke(cli, ["build", str(tmp_path / "docs"), "-o", str(tmp_path / "out.db")],
                                env={"SOURCE_DATE_EPOCH": "yesterday"})

    assert (result.exit_code, result.stdout, result.stderr) == (
        1, "", "Error: SOURCE_DATE_EPOCH='yesterday' is not a whole number of seconds\n")
