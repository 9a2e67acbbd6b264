"""Git provenance of the sources: commit, ref, and each file's last commit, from a constant
number of `git` processes (one `git log` walk for all files, never one process per file)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from mdfts.discover import SourceFile
from mdfts.errors import MdftsError

# Config that would change what `git log` prints is switched off; no pager, prompt or lock.
_GIT = ("git", "-c", "log.showSignature=false", "-c", "color.ui=never", "-c", "core.quotepath=off")
_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C", "GIT_PAGER": "cat"}
_MARK = "\x01"  # starts each commit header in the log walk; file names never start with it
_VERSION_OK = re.compile(r"[^\s\x00-\x1f\x7f]+\Z")


@dataclass(frozen=True, slots=True)
class Provenance:
    commit: str                  # full hash of HEAD
    commit_time: int             # committer time of HEAD, seconds since the epoch
    ref: str | None              # refs/heads/main, or refs/tags/v1.2 on a detached HEAD at a tag
    tag: str | None              # the tag HEAD is exactly at (highest version when several)
    shallow: bool
    last_commits: dict[str, str] = field(default_factory=dict)  # document path → commit hash

    def meta(self) -> dict[str, str]:
        """The mdfts_meta rows this provenance adds."""
        return {"git_commit": self.commit, **({"git_ref": self.ref} if self.ref else {})}


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*_GIT, *args], cwd=cwd, capture_output=True, text=True, encoding="utf-8", errors="surrogateescape",
        env={**os.environ, **_ENV}, check=False,
    )


def read_provenance(
    root: Path, files: Sequence[SourceFile], warn: Callable[[str], None] | None = None
) -> Provenance | None:
    """Commit, ref and per-file last commit when `root` is inside a git work tree, else None."""
    folder = root.resolve()
    folder = folder if folder.is_dir() else folder.parent
    try:
        head = _git(folder, "rev-parse", "--show-toplevel", "--is-shallow-repository", "--symbolic-full-name", "HEAD")
    except OSError:  # no git binary: provenance is optional
        return None
    if head.returncode != 0:
        message = head.stderr.strip().splitlines()[-1:] or ["git rev-parse failed"]
        if "not a git repository" not in message[0] and warn:
            warn(f"{root}: no git provenance: {message[0]}")
        return None
    toplevel, shallow, symbolic = (head.stdout.splitlines() + ["", "", ""])[:3]
    log = _git(folder, "log", "-1", "--format=%H %ct")
    if log.returncode != 0 or not log.stdout.strip():  # a repository without commits yet
        return None
    commit, ctime = log.stdout.split()
    tags = _git(folder, "tag", "--points-at", "HEAD", "--sort=-version:refname").stdout.split()
    tag = tags[0] if tags else None
    ref = symbolic if symbolic.startswith("refs/") else (f"refs/tags/{tag}" if tag else None)
    wanted = _repo_paths(Path(toplevel), files)
    last = _last_commits(Path(toplevel), wanted, shallow == "true") if wanted else {}
    return Provenance(commit, int(ctime), ref, tag, shallow == "true", last)


def _repo_paths(toplevel: Path, files: Sequence[SourceFile]) -> dict[str, str]:
    """Path relative to the repository → document path, for the files inside the repository."""
    out = {}
    for f in files:
        try:
            out[f.abspath.relative_to(toplevel).as_posix()] = f.path
        except ValueError:
            continue
    return out


def _last_commits(toplevel: Path, wanted: dict[str, str], shallow: bool) -> dict[str, str]:
    """Walk `git log` once, newest first, stopping as soon as every wanted file has been seen.

    In a shallow clone a commit without parents is the cut-off point, where every file looks
    added: files first seen there get no last commit rather than a wrong one.
    """
    # One pathspec, the folder holding all the files: a list of every file could exceed ARG_MAX.
    folder = os.path.commonpath([os.path.dirname(p) for p in wanted])
    args = [*_GIT, "log", f"--format={_MARK}%H %P", "--name-only", "-z", "--no-renames", "HEAD", "--"]
    args += [f":(literal){folder}"] if folder else []
    found: dict[str, str] = {}
    with subprocess.Popen(args, cwd=toplevel, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          env={**os.environ, **_ENV}) as proc:
        assert proc.stdout is not None
        commit, cut_off, pending = "", False, b""
        while len(found) < len(wanted):
            chunk = proc.stdout.read(1 << 16)
            if not chunk:
                break
            *items, pending = (pending + chunk).split(b"\0")
            for raw in items:
                item = raw.decode("utf-8", "surrogateescape")
                if item.startswith(_MARK):
                    commit, *parents = item[1:].split()
                    cut_off = shallow and not parents
                    continue
                name = item.lstrip("\n")
                if name in wanted and wanted[name] not in found and not cut_off:
                    found[wanted[name]] = commit
                elif name in wanted and cut_off:
                    found.setdefault(wanted[name], "")
        proc.kill()
    return {path: c for path, c in found.items() if c}


def artifact_version(explicit: str | None, prov: Provenance | None) -> str | None:
    """The artifact version: the explicit one ("" for none), else the tag at HEAD, else
    `YYYYMMDD+<7-char commit>` from the commit's UTC date, else None outside git."""
    if explicit is not None:
        explicit = explicit.strip()
        if explicit and not _VERSION_OK.match(explicit):
            raise MdftsError(f"--artifact-version {explicit!r}: no spaces or control characters")
        return explicit or None
    if prov is None:
        return None
    if prov.tag:
        return prov.tag
    day = datetime.fromtimestamp(prov.commit_time, tz=timezone.utc).strftime("%Y%m%d")
    return f"{day}+{prov.commit[:7]}"
