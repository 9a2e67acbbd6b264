"""Git provenance and the artifact version, on real git repositories in tmp_path."""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

import mdfts
from mdfts.artifact import SCHEMA_VERSION
from mdfts.build import build_index
from mdfts.cli import cli

from gitrepo import EPOCH, FIXTURE_TREE, commit_all, git, isolate, make_repo


def _meta(db: Path) -> dict[str, str]:
    with sqlite3.connect(db) as con:
        return dict(con.execute("select key, value from mdfts_meta where key like 'git%' or key = 'artifact_version'"))


def _last_commits(db: Path) -> dict[str, str | None]:
    with sqlite3.connect(db) as con:
        return dict(con.execute("select path, last_commit from documents order by path"))


@pytest.fixture(autouse=True)
def _no_user_git_config(monkeypatch: pytest.MonkeyPatch) -> None:
    isolate(monkeypatch)


def test_records_commit_ref_and_each_documents_last_commit(tmp_path: Path) -> None:
    docs = make_repo(tmp_path / "repo")
    first = git(tmp_path / "repo", "rev-parse", "HEAD")
    (docs / "guides" / "setup.md").write_text("# Setup\n\nChanged.\n")
    second = commit_all(tmp_path / "repo", "Change setup", when=EPOCH + 86_400)
    (tmp_path / "repo" / "README.md").write_text("# Outside the docs\n")
    head = commit_all(tmp_path / "repo", "Touch a file outside docs/", when=EPOCH + 2 * 86_400)
    (docs / "draft.md").write_text("# Not committed yet\n")

    build_index([docs], tmp_path / "out.db")

    assert _meta(tmp_path / "out.db") == {
        "git_commit": head, "git_ref": "refs/heads/main", "artifact_version": f"20231116+{head[:7]}",
    }
    assert _last_commits(tmp_path / "out.db") == {
        "draft.md": None, "guides/releases.md": first, "guides/setup.md": second, "index.md": first,
    }


def test_runs_a_fixed_number_of_git_processes_whatever_the_file_count(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    docs = make_repo(tmp_path / "repo")
    for n in range(30):
        (docs / f"page{n:02}.md").write_text(f"# Page {n}\n")
        commit_all(tmp_path / "repo", f"Page {n}", when=EPOCH + n)
    calls = tmp_path / "git-calls.log"
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {shutil.which("git")} "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")

    build_index([docs], tmp_path / "out.db")

    logged = calls.read_text().splitlines()
    walks = [c for c in logged if " log " in f" {c} " and "--name-only" in c]
    assert (len(logged), len(walks)) == (4, 1)
    assert len([c for c in _last_commits(tmp_path / "out.db").values() if c]) == 33


def test_head_exactly_at_a_tag_names_the_version_and_the_ref(tmp_path: Path) -> None:
    docs = make_repo(tmp_path / "repo")
    git(tmp_path / "repo", "tag", "v1.2.0")
    git(tmp_path / "repo", "tag", "v1.10.0")  # two tags on HEAD: the higher version wins
    git(tmp_path / "repo", "checkout", "-q", "--detach", "v1.10.0")

    build_index([docs], tmp_path / "out.db")

    meta = _meta(tmp_path / "out.db")
    assert (meta["artifact_version"], meta["git_ref"]) == ("v1.10.0", "refs/tags/v1.10.0")


def test_detached_head_without_tag_has_no_ref(tmp_path: Path) -> None:
    docs = make_repo(tmp_path / "repo")
    head = git(tmp_path / "repo", "rev-parse", "HEAD")
    git(tmp_path / "repo", "checkout", "-q", "--detach")

    build_index([docs], tmp_path / "out.db")

    assert _meta(tmp_path / "out.db") == {"git_commit": head, "artifact_version": f"20231114+{head[:7]}"}


def test_outside_git_there_is_no_provenance_and_no_version(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE_TREE, tmp_path / "docs")

    build_index([tmp_path / "docs"], tmp_path / "out.db")

    assert _meta(tmp_path / "out.db") == {}
    assert set(_last_commits(tmp_path / "out.db").values()) == {None}


def test_shallow_clone_leaves_unknown_last_commits_empty(tmp_path: Path) -> None:
    docs = make_repo(tmp_path / "repo")
    (docs / "index.md").write_text("# Handbook\n\nRewritten.\n")
    head = commit_all(tmp_path / "repo", "Rewrite the index", when=EPOCH + 60)
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{tmp_path / 'repo'}", "shallow")

    build_index([tmp_path / "shallow" / "docs"], tmp_path / "out.db")

    # HEAD is the cut-off: every file looks added there, so none of them can be dated.
    assert _last_commits(tmp_path / "out.db") == {"guides/releases.md": None, "guides/setup.md": None,
                                                  "index.md": None}
    assert _meta(tmp_path / "out.db")["git_commit"] == head


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--artifact-version", "2.0.0-rc.1"], {}, {"artifact_version": "2.0.0-rc.1"}),
        ([], {"MDFTS_ARTIFACT_VERSION": "nightly-42"}, {"artifact_version": "nightly-42"}),
        (["--artifact-version", ""], {"MDFTS_ARTIFACT_VERSION": "ignored"}, {}),
    ],
    ids=["option", "env", "empty-means-none"],
)
def test_explicit_artifact_version_wins(tmp_path: Path, args: list[str], env: dict[str, str],
                                       expected: dict[str, str]) -> None:
    docs = make_repo(tmp_path / "repo")
    head = git(tmp_path / "repo", "rev-parse", "HEAD")

    result = CliRunner().invoke(cli, ["build", str(docs), "-o", str(tmp_path / "out.db"), "-q", *args], env=env)

    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert _meta(tmp_path / "out.db") == {"git_commit": head, "git_ref": "refs/heads/main", **expected}


def test_bad_artifact_version_is_one_line_error(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE_TREE, tmp_path / "docs")

    result = CliRunner().invoke(cli, ["build", str(tmp_path / "docs"), "-o", str(tmp_path / "out.db"),
                                      "--artifact-version", "1.0 final"])

    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "Error: --artifact-version '1.0 final': no spaces or control characters\n"
    assert not (tmp_path / "out.db").exists()


def test_info_shows_the_three_versions(tmp_path: Path) -> None:
    docs = make_repo(tmp_path / "repo")
    git(tmp_path / "repo", "tag", "docs-7")
    build_index([docs], tmp_path / "out.db")

    result = CliRunner().invoke(cli, ["info", str(tmp_path / "out.db")])

    rows = dict(tuple(part.strip() for part in line.split("  ", 1)) for line in result.stdout.splitlines())
    assert result.exit_code == 0
    assert rows["schema"] == f"{SCHEMA_VERSION} (this mdfts reads {SCHEMA_VERSION}: compatible)"
    assert rows["artifact version"] == "docs-7"
    assert rows["git ref"] == "refs/heads/main"
    assert rows["built by mdfts"] == mdfts.__version__


def test_git_that_fails_for_another_reason_warns_and_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = make_repo(tmp_path / "repo")
    shim = tmp_path / "bin" / "git"
    shim.parent.mkdir()
    shim.write_text("#!/bin/sh\necho 'fatal: detected dubious ownership in repository' >&2\nexit 128\n")
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    warnings: list[str] = []

    build_index([docs], tmp_path / "out.db", warn=warnings.append)

    assert warnings == [f"{docs}: no git provenance: fatal: detected dubious ownership in repository"]
    assert _meta(tmp_path / "out.db") == {}


def test_a_machine_without_git_builds_without_provenance(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = make_repo(tmp_path / "repo")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))

    build_index([docs], tmp_path / "out.db")

    assert _meta(tmp_path / "out.db") == {}
