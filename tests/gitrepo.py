"""Real git repositories in tmp_path with fixed identities and dates, so commits are reproducible."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURE_TREE = Path(__file__).resolve().parent / "fixtures" / "repro"
EPOCH = 1_700_000_000  # 2023-11-14T22:13:20Z


def git_env(when: int = EPOCH) -> dict[str, str]:
    """An environment where git ignores the user's config and stamps fixed names and dates."""
    return {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Docs Bot", "GIT_AUTHOR_EMAIL": "docs@example.org",
        "GIT_COMMITTER_NAME": "Docs Bot", "GIT_COMMITTER_EMAIL": "docs@example.org",
        "GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000",
    }


def isolate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fixed git identity and config, and no version or date settings from the caller's shell."""
    for key, value in git_env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("MDFTS_ARTIFACT_VERSION", raising=False)
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)


def git(repo: Path, *args: str, when: int = EPOCH) -> str:
    """Run git in `repo`; returns stdout, raises on failure."""
    done = subprocess.run(["git", *args], cwd=repo, env=git_env(when), capture_output=True, text=True, check=True)
    return done.stdout.strip()


def commit_all(repo: Path, message: str, when: int = EPOCH) -> str:
    """Stage everything and commit; returns the new commit's hash."""
    git(repo, "add", "-A", when=when)
    git(repo, "commit", "-q", "-m", message, when=when)
    return git(repo, "rev-parse", "HEAD")


def make_repo(path: Path, docs: str = "docs") -> Path:
    """A repository at `path` with the fixture tree under `docs/`, in one commit; returns the docs folder."""
    shutil.copytree(FIXTURE_TREE, path / docs)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "Add the docs")
    return path / docs
