"""Hostile and broken input: each row of docs/bad-input.md, through the real CLI.

Every failing case checks the exit code, the exact message, that the previous artifact is
byte-identical and that no temp file is left beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from mdfts.cli import cli

GOOD = "# Payments\n\nRoll back with `PAYMENTS_DB_URL` set.\n"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
SETPRIV = shutil.which("setpriv")


def build(docs: Path, out: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["build", str(docs), "-o", str(out), "-q", *args])


def temps(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.glob(f".{out.name}.*"))


def paths(out: Path) -> list[str]:
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        return [r[0] for r in db.execute("select path from documents order by path")]


def sections(out: Path, path: str) -> list[tuple[int, int, int, str]]:
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        return db.execute(
            "select level, start_line, end_line, heading from sections where path = ? order by ordinal", (path,)
        ).fetchall()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    d = tmp_path / "docs"
    d.mkdir()
    (d / "good.md").write_text(GOOD)
    return d


@pytest.fixture
def built(docs: Path, tmp_path: Path) -> Path:
    """An artifact built from `docs` before the bad file arrives."""
    out = tmp_path / "out" / "index.db"
    result = build(docs, out)
    assert result.exit_code == 0, result.output
    return out


def assert_kept(out: Path, before: bytes) -> None:
    assert out.read_bytes() == before
    assert temps(out) == []


# A 320-byte "billion laughs": nine strings, then seven levels of nine aliases of the level before
# (9^8 strings once expanded: a 351 MB index and 1 GB of memory before it was refused).
ALIAS_BOMB = ("---\na: &a [" + ", ".join(['"lol"'] * 9) + "]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 9)}]\n" for p, n in zip("abcdefg", "bcdefgh", strict=True)
) + "---\n# ok\n").encode()
# 1,000 nested flow lists: PyYAML's pure loader (the error-line fallback) raised RecursionError.
DEEP_YAML = b"---\nx: " + b"[" * 1000 + b"]" * 1000 + b"\n---\n# ok\n"

# -- files that fail the build ------------------------------------------------------------------

FAILING = [
    ("bad.md", b"# ok\n\nfine\n\xff\xfe here\n", "bad.md:4: not valid UTF-8"),
    ("bad.md", b"# ok\nfine\n\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "bad.md:5: binary file (NUL byte), not markdown"),
    ("bad.md", b"# ok\n\nline\x00three\n", "bad.md:3: binary file (NUL byte), not markdown"),
    ("bad.md", b"\xff\xfe#\x00 \x00\x00\xd8\n\x00", "bad.md: not valid UTF-16-LE (byte 6)"),
    ("bad.md", b"---\ntitle: [unclosed\n---\n# ok\n", "bad.md:2: front matter is not valid YAML"),
    ("bad.md", b"---\n- a\n- b\n---\n# ok\n", "bad.md:2: front matter is not a mapping (it is a list)"),
    ("bad.md", b"---\njust words\n---\n# ok\n", "bad.md:2: front matter is not a mapping (it is a str)"),
    ("bad\nname.md", b"# ok\n\xff\n", "bad\\nname.md:2: not valid UTF-8"),
    (b"bad\xff.md", b"# ok\n", "bad\\udcff.md: file name is not valid UTF-8; rename it"),
    ("bad.md", ALIAS_BOMB, "bad.md:6: front matter is too large once its YAML aliases are expanded"),
    ("bad.md", DEEP_YAML, "bad.md:2: front matter nests deeper than 64 levels"),
    ("bad.md", b"---\na: &a [1, *a]\n---\n# ok\n", "bad.md:2: front matter has a YAML alias inside its own anchor"),
    ("bad.md", b"---\nn: " + b"1" * 5000 + b"\n---\n# ok\n",
     "bad.md:2: front matter is not valid YAML (a value Python cannot convert)"),
    ("bad.md", b'+++\ntitle = "ok"\nweight = = 1\n+++\n# ok\n', "bad.md:3: front matter is not valid TOML"),
    ("bad.md", b"+++\nx = " + b"[" * 65 + b"]" * 65 + b"\n+++\n# ok\n", "bad.md:2: front matter nests deeper than 64 levels"),
    ("bad.md", b"+++\nx = " + b"[" * 1000 + b"]" * 1000 + b"\n+++\n# ok\n",
     "bad.md:2: front matter nests deeper than 64 levels"),
    ("bad.md", b"+++\nn = " + b"1" * 5000 + b"\n+++\n# ok\n",
     "bad.md:2: front matter is not valid TOML (a value Python cannot convert)"),
    ("bad.md", b"\xef\xbb\xbf# ok\n\nline\x00three\n", "bad.md:3: binary file (NUL byte), not markdown"),
    ("bad.md", "# ok\nline\x00two\n".encode("utf-16"), "bad.md:2: binary file (NUL byte), not markdown"),
]


@pytest.mark.parametrize(
    ("name", "content", "error"),
    FAILING,
    ids=["invalid-utf8", "binary", "nul-byte", "bad-utf16", "front-matter-yaml", "front-matter-list",
         "front-matter-str", "newline-in-name", "undecodable-name", "yaml-alias-bomb", "yaml-1000-deep",
         "yaml-recursive-alias", "yaml-5000-digit-int", "front-matter-toml", "toml-65-deep", "toml-1000-deep",
         "toml-5000-digit-int", "nul-byte-after-utf8-bom", "nul-in-utf16"],
)
def test_bad_file_fails_and_keeps_the_old_index(docs: Path, built: Path, name: str | bytes,
                                                content: bytes, error: str) -> None:
    before = built.read_bytes()
    target = os.path.join(os.fsencode(docs), name) if isinstance(name, bytes) else docs / name
    with open(target, "wb") as fh:
        fh.write(content)
    result = build(docs, built)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {error}\n")
    assert_kept(built, before)


@pytest.mark.parametrize(("name", "content", "error"), FAILING[:2] + FAILING[5:6] + FAILING[9:11],
                         ids=["invalid-utf8", "binary", "front-matter-list", "yaml-alias-bomb", "yaml-1000-deep"])
def test_on_error_skip_warns_and_indexes_the_rest(docs: Path, built: Path, name: str, content: bytes, error: str) -> None:
    (docs / name).write_bytes(content)
    (docs / "more.md").write_text("# More\n")
    result = build(docs, built, "--on-error", "skip")
    assert (result.exit_code, result.stderr) == (0, f"Warning: {error}; skipped\n")
    assert paths(built) == ["good.md", "more.md"]
    assert temps(built) == []


def test_on_error_skip_with_every_file_bad_keeps_the_old_index(docs: Path, built: Path) -> None:
    """Skipping every file built an index of nothing over the old one, and said exit 0."""
    before = built.read_bytes()
    (docs / "good.md").write_bytes(b"# ok\n\xff\n")
    (docs / "more.md").write_bytes(b"# More\n\0\n")
    result = build(docs, built, "--on-error", "skip")
    assert (result.exit_code, result.stderr) == (1, (
        "Warning: good.md:2: not valid UTF-8; skipped\n"
        "Warning: more.md:2: binary file (NUL byte), not markdown; skipped\n"
        f"Error: {docs}: every file was skipped (2); nothing to index (--allow-empty builds an empty index)\n"))
    assert built.read_bytes() == before
    assert temps(built) == []
    assert build(docs, built, "--on-error", "skip", "--allow-empty").exit_code == 0
    assert paths(built) == []


def test_non_finite_numbers_in_front_matter_are_valid_json(docs: Path, tmp_path: Path) -> None:
    # JSON has no Infinity or NaN: json.dumps wrote them anyway, and json_valid() said 0.
    (docs / "odd.md").write_text("---\nweight: .inf\nlow: -.inf\nodd: [.nan, 1.5]\nm: {1: a, null: b, false: c}\n---\n# A\n")
    out = tmp_path / "index.db"
    assert build(docs, out).exit_code == 0
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        valid, fm = db.execute("select json_valid(front_matter), front_matter from documents where path = 'odd.md'").fetchone()
    assert valid == 1
    assert json.loads(fm) == {"weight": ".inf", "low": "-.inf", "odd": [".nan", 1.5], "m": {"1": "a", "null": "b", "false": "c"}}


# -- files that are indexed ----------------------------------------------------------------------

@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", []),
        (b"\n  \n\t\n", []),
        (b"\xff\xfe" + "# Caf\u00e9\n\nbody\n".encode("utf-16-le"), [(1, 1, 3, "Café")]),
        (b"\xfe\xff" + "# Caf\u00e9\n\nbody\n".encode("utf-16-be"), [(1, 1, 3, "Café")]),
        (b"\xef\xbb\xbf# BOM\r\nbody\r\n", [(1, 1, 2, "BOM")]),
        (b"# Open\n```sh\nrun it\n# not a heading\n", [(1, 1, 4, "Open")]),
        (b"# A\n" + b"> " * 5000 + b"deep\n", [(1, 1, 2, "A")]),
        (b"# A\n" + b"- " * 5000 + b"x\n" + b"1. " * 5000 + b"y\n", [(1, 1, 3, "A")]),
        (b"# A\n" + b"[" * 100_000 + b"![" * 50_000 + b"`a" * 50_000 + b"\n", [(1, 1, 2, "A")]),
        (b"---\n\n# A\n\nbody\n", [(1, 3, 5, "A")]),
        (b"# A\n" + b"{{< a\n" * 20_000, [(1, 1, 20_001, "A")]),
        (b"# A\n!!! a" + b" " * 100_000 + b"b\n    c\n", [(1, 1, 3, "A")]),
        (b"# A\n" + b":::a\n" * 20_000 + b"# B\n", [(1, 1, 20_002, "A")]),
    ],
    ids=["empty", "blank", "utf16-le-bom", "utf16-be-bom", "utf8-bom-crlf", "unclosed-fence",
         "5000-deep-quotes", "5000-deep-lists", "brackets-and-backticks", "rule-first-not-front-matter",
         "unclosed-shortcodes", "admonition-of-spaces", "unclosed-containers"],
)
def test_odd_file_is_indexed(docs: Path, tmp_path: Path, content: bytes, expected: list[tuple[int, int, int, str]]) -> None:
    (docs / "odd.md").write_bytes(content)
    out = tmp_path / "index.db"
    result = build(docs, out)
    assert (result.exit_code, result.stderr) == (0, "")
    assert paths(out) == ["good.md", "odd.md"]
    assert sections(out, "odd.md") == expected


@pytest.mark.parametrize("name", ["with space.md", "caf\u00e9 \u65e5\u672c.md", "new\nline.md", "tab\tand 'quote'.md"])
def test_odd_file_names_are_indexed_as_written(docs: Path, tmp_path: Path, name: str) -> None:
    (docs / name).write_text("# Odd name\n")
    out = tmp_path / "index.db"
    assert build(docs, out).exit_code == 0
    assert paths(out) == sorted(["good.md", name])


@pytest.mark.slow
def test_50000_headings(docs: Path, tmp_path: Path) -> None:
    (docs / "many.md").write_text("".join(f"## H{i}\ntext {i}\n" for i in range(50_000)))
    out = tmp_path / "index.db"
    assert build(docs, out).exit_code == 0
    got = sections(out, "many.md")
    assert (len(got), got[0], got[-1]) == (50_000, (2, 1, 2, "H0"), (2, 99_999, 100_000, "H49999"))


@pytest.mark.slow
def test_10_mb_single_line(docs: Path, tmp_path: Path) -> None:
    words = " ".join(f"w{i} `c{i}` [l{i}](u) *e{i}*" for i in range(400_000))
    (docs / "line.md").write_text("# Line\n" + words[: 10 * 2**20] + "\n")
    out = tmp_path / "index.db"
    result = build(docs, out)
    assert (result.exit_code, result.stderr) == (0, "")
    assert sections(out, "line.md") == [(1, 1, 2, "Line")]


@pytest.mark.slow
def test_50_mb_file(docs: Path, tmp_path: Path) -> None:
    # Long words keep the exact-token scan cheap: this is about size; prose speed is in stress.py.
    para = ("payments" * 128 + "\n") * 40
    chunk = "".join(f"## Step {i}\n\n{para}\n" for i in range(100))
    (docs / "big.md").write_text("# Big\n\n" + chunk * (50 * 2**20 // len(chunk) + 1))
    assert (docs / "big.md").stat().st_size >= 50 * 2**20
    out = tmp_path / "index.db"
    result = build(docs, out)
    assert (result.exit_code, result.stderr) == (0, "")
    assert paths(out) == ["big.md", "good.md"]


# -- links and folders -----------------------------------------------------------------------------

def test_symlinks_outside_the_root_and_loops_are_skipped(docs: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("# Secret\n")
    (docs / "file-link.md").symlink_to(outside / "secret.md")
    (docs / "folder-link").symlink_to(outside, target_is_directory=True)
    (docs / "loop.md").symlink_to(docs / "loop.md")
    (docs / "dangling.md").symlink_to(docs / "gone.md")
    (docs / "inside.md").symlink_to(docs / "good.md")
    out = tmp_path / "index.db"
    result = build(docs, out)
    assert (result.exit_code, result.stderr.splitlines()) == (0, [
        "Warning: folder-link: skipped, a symlink to a folder (not followed)",
        "Warning: dangling.md: skipped, a broken symlink or a symlink loop",
        "Warning: file-link.md: skipped, a symlink that leads outside docs",
        "Warning: loop.md: skipped, a broken symlink or a symlink loop",
    ])
    assert paths(out) == ["good.md", "inside.md"]


@pytest.mark.parametrize("name", ["index.db", "index.md"])
def test_output_inside_the_source_tree_is_not_indexed(docs: Path, name: str) -> None:
    out = docs / name
    assert build(docs, out).exit_code == 0
    first = paths(out)
    assert build(docs, out).exit_code == 0
    assert paths(out) == first == ["good.md"]
    assert temps(out) == []


def test_output_that_is_a_source_doc_is_never_replaced(docs: Path) -> None:
    # `-o docs/README.md` replaced a real doc with the database (exit 0); later builds then
    # failed on it as a binary file. --force does not apply inside a source folder.
    readme = docs / "README.md"
    readme.write_text("# Read me\n")
    for extra in ((), ("--force",)):
        result = build(docs, readme, *extra)
        assert (result.exit_code, result.stderr) == (1, (
            f"Error: {readme}: is in the source folder {docs} and not an mdfts index; refusing to replace it "
            "(--force does not apply inside a source folder)\n"))
        assert readme.read_text() == "# Read me\n"
        assert temps(readme) == []


def test_output_that_is_not_an_index_needs_force(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "notes.txt"
    out.write_text("my notes\n")
    result = build(docs, out)
    assert (result.exit_code, result.stderr) == (
        1, f"Error: {out}: exists and is not an mdfts index; refusing to replace it (--force replaces it)\n")
    assert out.read_text() == "my notes\n"
    sqlite3.connect(tmp_path / "other.db").execute("create table t (x)").connection.close()
    assert build(docs, tmp_path / "other.db").exit_code == 1  # SQLite, but not an mdfts index
    assert build(docs, out, "--force").exit_code == 0
    assert paths(out) == ["good.md"]
    assert build(docs, out).exit_code == 0  # an mdfts index now: replaced without --force


@pytest.mark.parametrize("force", [False, True], ids=["plain", "force"])
def test_output_that_is_not_a_regular_file_is_never_replaced(docs: Path, tmp_path: Path, force: bool) -> None:
    """`-o /dev/null` replaced the device with the index (as root): a FIFO stands in for it here."""
    out = tmp_path / "pipe"
    os.mkfifo(out)
    link = tmp_path / "link.db"  # /dev/stdout is a symlink to such a file
    link.symlink_to(out)
    for target in (out, link):
        result = build(docs, target, *(["--force"] if force else []))
        assert (result.exit_code, result.stderr) == (
            1, f"Error: {target}: exists and is not a regular file; refusing to replace it\n")
    assert stat.S_ISFIFO(out.lstat().st_mode) and link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs", "link.db", "pipe"]


def test_missing_output_folder_is_created(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "index.db"
    assert build(docs, out).exit_code == 0
    assert paths(out) == ["good.md"]


def test_output_under_a_file_fails(docs: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = build(docs, tmp_path / "file" / "index.db")
    assert (result.exit_code, result.stderr) == (1, f"Error: {tmp_path / 'file'}: not a folder, cannot hold the output\n")


def test_output_that_is_a_folder_is_a_usage_error(docs: Path, tmp_path: Path) -> None:
    result = build(docs, tmp_path)
    assert result.exit_code == 2
    assert f"{str(tmp_path)!r} is a folder; give the file to write, e.g. {tmp_path / 'docs.db'}" in result.stderr


# -- permissions: as a non-root user (root ignores permission bits) --------------------------------

def run_unprivileged(args: list[str]) -> subprocess.CompletedProcess[str]:
    """Run `python -m mdfts ARGS` as ourselves, or as nobody when we are root."""
    cmd = [sys.executable, "-m", "mdfts", *args]
    if IS_ROOT:
        cmd = [SETPRIV or "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder the unprivileged user can enter (pytest's tmp_path is private to us)."""
    if IS_ROOT and not SETPRIV:
        pytest.skip("running as root without setpriv: permission bits cannot be tested")
    d = Path(tempfile.mkdtemp(prefix="mdfts-perm-"))
    d.chmod(0o777)
    (d / "docs").mkdir()
    (d / "docs" / "good.md").write_text(GOOD)
    for p in (d / "docs", d / "docs" / "good.md"):
        p.chmod(0o777 if p.is_dir() else 0o666)
    yield d
    for p in d.rglob("*"):
        if not p.is_symlink():
            p.chmod(0o777 if p.is_dir() else 0o666)
    shutil.rmtree(d)


def _old_index(d: Path) -> tuple[Path, bytes]:
    out = d / "out" / "index.db"
    done = run_unprivileged(["build", str(d / "docs"), "-o", str(out), "-q"])
    assert done.returncode == 0, done.stderr
    return out, out.read_bytes()


@pytest.mark.integration
def test_unreadable_file(shared_tmp: Path) -> None:
    out, before = _old_index(shared_tmp)
    secret = shared_tmp / "docs" / "secret.md"
    secret.write_text("# Secret\n")
    secret.chmod(0)
    done = run_unprivileged(["build", str(shared_tmp / "docs"), "-o", str(out), "-q"])
    assert (done.returncode, done.stderr) == (1, "Error: secret.md: cannot read: Permission denied\n")
    assert_kept(out, before)
    done = run_unprivileged(["build", str(shared_tmp / "docs"), "-o", str(out), "-q", "--on-error", "skip"])
    assert (done.returncode, done.stderr) == (0, "Warning: secret.md: cannot read: Permission denied; skipped\n")


@pytest.mark.integration
def test_unlistable_folder(shared_tmp: Path) -> None:
    out, before = _old_index(shared_tmp)
    sub = shared_tmp / "docs" / "private"
    sub.mkdir()
    (sub / "a.md").write_text("# A\n")
    sub.chmod(0)
    done = run_unprivileged(["build", str(shared_tmp / "docs"), "-o", str(out), "-q"])
    assert (done.returncode, done.stderr) == (1, "Error: private: cannot list the folder: Permission denied\n")
    assert_kept(out, before)


@pytest.mark.integration
def test_read_only_output_folder(shared_tmp: Path) -> None:
    out, before = _old_index(shared_tmp)
    out.parent.chmod(0o555)
    done = run_unprivileged(["build", str(shared_tmp / "docs"), "-o", str(out), "-q"])
    assert (done.returncode, done.stderr) == (1, f"Error: {out.parent}: folder is not writable\n")
    assert_kept(out, before)


# -- disk full and killed builds (subprocesses) ------------------------------------------------------

FILL = "".join(f"## Section {i}\n\nText about rollback step {i} with TOKEN_{i} and --flag-{i}.\n\n" for i in range(4000))


def _limited_build(docs: Path, out: Path, max_bytes: int) -> subprocess.CompletedProcess[str]:
    """A build whose files may not grow past max_bytes (RLIMIT_FSIZE; Python ignores SIGXFSZ, so
    writes fail with EFBIG as they would on a full disk)."""
    code = (
        "import resource, sys; from mdfts.cli import cli; "
        f"resource.setrlimit(resource.RLIMIT_FSIZE, ({max_bytes}, {max_bytes})); "
        "sys.argv = ['mdfts'] + sys.argv[1:]; cli()"
    )
    return subprocess.run([sys.executable, "-c", code, "build", str(docs), "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.integration
def test_disk_full_rlimit(docs: Path, built: Path) -> None:
    before = built.read_bytes()
    (docs / "big.md").write_text(FILL)
    done = _limited_build(docs, built, 256 * 1024)
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: {built}: cannot write the index: "), done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert_kept(built, before)


@pytest.mark.integration
def test_disk_full_at_the_first_write_leaves_no_temp(docs: Path, built: Path) -> None:
    # The temp file was created, its first page failed, and the empty file stayed for good.
    before = built.read_bytes()
    done = _limited_build(docs, built, 1024)
    assert done.returncode == 1
    assert done.stderr.startswith(f"Error: {built}: cannot write the index: "), done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert_kept(built, before)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_journals_of_killed_builds_are_removed(docs: Path, built: Path) -> None:
    # kill -9 during the final VACUUM INTO leaves .NAME.PID.tmp-journal beside the temp file;
    # the stale-temp glob (.NAME.*.tmp) missed it, so it stayed forever.
    dead, alive = _dead_pid(), os.getppid()  # a live process that is not this one
    stale = [f".index.db.{dead}.{suffix}" for suffix in ("tmp", "tmp-journal", "build.tmp", "build.tmp-journal")]
    kept = [f".index.db.{alive}.tmp-journal", ".index.db.notapid.tmp-journal", ".other.db.1.tmp-journal"]
    for name in stale + kept:
        (built.parent / name).write_bytes(b"x")
    assert build(docs, built).exit_code == 0
    assert sorted(p.name for p in built.parent.iterdir() if p.name != "index.db") == sorted(kept)


@pytest.mark.skipif(not IS_ROOT, reason="mounting a tmpfs needs root; test_disk_full_rlimit covers the rest")
@pytest.mark.integration
def test_disk_full_tmpfs(docs: Path, tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = mnt / "index.db"
        assert build(docs, out).exit_code == 0
        before = out.read_bytes()
        (docs / "big.md").write_text(FILL)
        result = build(docs, out)
        assert (result.exit_code, result.stderr) == (1, f"Error: {out}: cannot write the index: database or disk is full\n")
        assert_kept(out, before)
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def _start_slow_build(docs: Path, out: Path) -> subprocess.Popen[str]:
    """Start a build that takes seconds, and return once its temp file exists."""
    for i in range(60):
        (docs / f"slow{i:02}.md").write_text(FILL)
    # SIGINT as a terminal delivers it: a test run started in the background (make test &) has
    # SIGINT ignored, and a child inherits that, so Python would never raise KeyboardInterrupt
    proc = subprocess.Popen([sys.executable, "-m", "mdfts", "build", str(docs), "-o", str(out), "-q"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not temps(out):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.2)  # well into parsing
    assert proc.poll() is None, "the build finished before it could be interrupted; give it more files"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.integration
def test_interrupted_build_leaves_nothing(docs: Path, built: Path, sig: signal.Signals) -> None:
    before = built.read_bytes()
    proc = _start_slow_build(docs, built)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err.strip()) == (128 + sig, "Interrupted.")  # 130 for Ctrl-C, as shells do
    assert_kept(built, before)


# sqlite3 reports the interrupt it swallows inside the function as "Exception ignored": expected here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_inside_an_sqlite_function_is_an_interrupt(docs: Path, built: Path, sig: signal.Signals,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A signal that arrives while SQLite runs the build's mdfts_ln(): sqlite3 turns what the
    handler raises into 'user-defined function raised exception', which was exit 1 and that error."""
    import mdfts.write

    ln = mdfts.write._ln
    sent: list[int] = []

    def signalled_ln(x: float | None) -> float | None:
        if not sent:
            sent.append(sig)
            os.kill(os.getpid(), sig)  # the handler runs here, inside the SQLite call
        return ln(x)

    monkeypatch.setattr(mdfts.write, "_ln", signalled_ln)
    before = built.read_bytes()
    (docs / "more.md").write_text("# More\n\nRoll back.\n")
    # SIGINT as a terminal delivers it: a test run started in the background has it ignored
    old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        result = build(docs, built)
    finally:
        signal.signal(signal.SIGINT, old_int)
    assert (sent, result.exit_code, result.stderr) == ([sig], 128 + sig, "\nInterrupted.\n")
    assert_kept(built, before)


@pytest.mark.integration
def test_sigkill_mid_build_leaves_a_temp_the_next_build_removes(docs: Path, built: Path) -> None:
    before = built.read_bytes()
    proc = _start_slow_build(docs, built)
    proc.kill()
    proc.communicate(timeout=60)
    assert built.read_bytes() == before
    stale = temps(built)
    assert stale and all(name.endswith(".tmp") and f".{proc.pid}." in name for name in stale)
    for p in docs.glob("slow*.md"):
        p.unlink()
    assert build(docs, built).exit_code == 0
    assert temps(built) == []
    assert paths(built) == ["good.md"]


# -- per-file work is bounded (issue #16) --------------------------------------------------------

def _table_bomb(tables: int) -> str:
    # 300 header cells and 300 one-cell rows: markdown-it pads every row to 300 cells.
    t = "|a" * 300 + "|\n" + "|-" * 300 + "|\n" + "x\n" * 300 + "\n"
    return "# T\n\n" + t * tables


def test_table_rows_are_one_token_each() -> None:
    from mdfts.parse import parse_blocks

    blocks = parse_blocks(_table_bomb(2))
    kinds = [b.type for b in blocks]
    # Cells fold into their row: 3 tokens a padded cell were 1.47 GB for 36 KB of tables.
    assert not {"td_open", "th_open", "td_close", "th_close"} & set(kinds)
    assert kinds.count("tr_open") < 2 * 301 and len(blocks) < 3 * kinds.count("tr_open") + 40
    rows = [b for b in blocks if b.type == "tr_open"]
    assert rows[0].meta["cells"][:2] == [(0, "a"), (1, "a")] and len(rows[0].meta["cells"]) == 300
    assert rows[1].meta["cells"] == [(0, "x")]


def test_table_bomb_is_indexed_with_its_cells(docs: Path, tmp_path: Path) -> None:
    (docs / "t.md").write_text(_table_bomb(2) + "|`CELL_TOKEN`|b|\n|-|-|\n|`FIRST_COL`|see `OTHER_COL`|\n")
    out = tmp_path / "index.db"
    assert build(docs, out).exit_code == 0
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        got = sorted(db.execute("select token, source from tokens join sections on sections.id = section_id "
                                "where path = 't.md' and token like '%\\_%' escape '\\'"))
    assert got == [("CELL_TOKEN", "definition"), ("FIRST_COL", "definition"), ("OTHER_COL", "code")]


def _peak_build_mb(docs: Path, out: Path) -> float:
    """VmHWM of a build in a fresh interpreter, in MB."""
    code = ("import sys; from pathlib import Path; from mdfts.build import build_index;"
            "build_index([Path(sys.argv[1])], Path(sys.argv[2]));"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    done = subprocess.run([sys.executable, "-c", code, str(docs), str(out)], capture_output=True, text=True, check=True)
    return int(done.stdout) / 1024


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_table_bomb_build_memory_is_bounded(docs: Path, tmp_path: Path) -> None:
    (docs / "t.md").write_text(_table_bomb(20))  # the 36 KB file: 1.47 GB and 44 s before
    size_mb = (docs / "t.md").stat().st_size / 2**20
    assert _peak_build_mb(docs, tmp_path / "index.db") <= 10 * size_mb + 64


def test_sections_written_before_a_late_h1_get_its_title(docs: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import mdfts.build
    import mdfts.sections

    # Sections stream to the index before the document ends; those held back past the limit are
    # written with the title so far (the file name) and corrected once the first h1 names it.
    monkeypatch.setattr(mdfts.sections, "_HOLD_CHARS", 10)
    monkeypatch.setattr(mdfts.build, "STREAM_FROM", 0)  # every file streamed, as big ones are
    (docs / "late.md").write_text("lead text\n\n## One\n\nbody one\n\n# Late title\n\n## Two\n\nbody two\n")
    out = tmp_path / "index.db"
    from mdfts.build import build_index

    build_index([docs], out)
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db:
        titles = db.execute("select distinct s.title, d.title from sections_full as s join documents as d "
                            "on d.id = s.document_id where d.path = 'late.md'").fetchall()
    assert titles == [("Late title", "Late title")]


def test_a_file_that_fails_half_way_leaves_no_rows(docs: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import mdfts.build
    from mdfts.errors import SourceError

    real = mdfts.build._document

    def fails_after_one_section(src: Any, *args: Any) -> Any:
        if src.path != "bad.md":
            return real(src, *args)
        real(src, *args)
        raise SourceError(src.path, 3, "failed after its sections were written")

    (docs / "bad.md").write_text("# Bad\n\n`BAD_TOKEN`\n\n## More\n\ntext\n")
    (docs / "more.md").write_text("# More\n")
    monkeypatch.setattr(mdfts.build, "_document", fails_after_one_section)
    monkeypatch.setattr(mdfts.build, "STREAM_FROM", 0)  # every file streamed, as big ones are
    out, clean = tmp_path / "index.db", tmp_path / "clean.db"
    result = build(docs, out, "--on-error", "skip")
    assert (result.exit_code, result.stderr) == (0, "Warning: bad.md:3: failed after its sections were written; skipped\n")
    (docs / "bad.md").unlink()
    assert build(docs, clean).exit_code == 0
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as db, sqlite3.connect(f"file:{clean}?mode=ro", uri=True) as c:
        for table in ("documents", "sections", "tokens"):
            assert db.execute(f"select * from {table} order by 1, 2").fetchall() == \
                c.execute(f"select * from {table} order by 1, 2").fetchall(), table


def test_streamed_files_give_the_same_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import mdfts.build
    from mdfts.build import build_index

    docs = Path(__file__).resolve().parent / "fixtures" / "docs"
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1")
    build_index([docs], tmp_path / "whole.db", artifact_version="")
    monkeypatch.setattr(mdfts.build, "STREAM_FROM", 0)  # every file streamed, section by section
    build_index([docs], tmp_path / "streamed.db", artifact_version="")
    assert (tmp_path / "whole.db").read_bytes() == (tmp_path / "streamed.db").read_bytes()


def test_check_reads_table_cells_streamed(docs: Path) -> None:
    # mdfts check parsed links from every cell token of the whole document at once (the table
    # bomb blew it up in CI too); cells are folded into rows now, and their links still checked.
    (docs / "t.md").write_text(_table_bomb(1) + "|[gone](missing.md)|[ref][r]|\n|-|-|\n\n[r]: gone-too.md\n")
    result = CliRunner().invoke(cli, ["check", str(docs)])
    assert "missing.md" in result.stdout and "gone-too.md" in result.stdout, result.stdout


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_check_of_a_table_bomb_is_bounded(docs: Path) -> None:
    (docs / "t.md").write_text(_table_bomb(20))
    code = ("import sys; from mdfts.cli import cli; sys.argv = ['mdfts', 'check', sys.argv[1]];\n"
            "try:\n    cli()\nexcept SystemExit:\n    pass\n"
            "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1])")
    done = subprocess.run([sys.executable, "-c", code, str(docs)], capture_output=True, text=True, check=True)
    peak_mb = int(done.stdout.splitlines()[-1]) / 1024
    assert peak_mb <= 10 * (docs / "t.md").stat().st_size / 2**20 + 64
