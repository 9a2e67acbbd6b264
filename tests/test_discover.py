"""discover and decode: which files are indexed, in what order, under which relative path."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from mdfts.discover import FileSet, decode, discover, matches, read_source, wanted
from mdfts.errors import MdftsError, SourceError


def _tree(root: Path, files: list[str]) -> Path:
    for rel in files:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"# {rel}\n", encoding="utf-8")
    return root


def _paths(roots: list[Path], **kwargs: object) -> list[str]:
    return [f.path for f in discover(roots, **kwargs)]  # type: ignore[arg-type]


TREE = [
    "z.md", "a.markdown", "b/c.md", "b/a/deep.md", "notes.txt", "README.MD",
    ".hidden.md", ".git/HEAD.md", ".github/x.md", "node_modules/pkg/readme.md", "b/node_modules/y.md",
    "drafts/wip.md",
]


def test_default_selection_is_sorted_and_skips_hidden_and_node_modules(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs", TREE)
    assert _paths([root]) == ["a.markdown", "b/a/deep.md", "b/c.md", "drafts/wip.md", "z.md"]


@pytest.mark.parametrize(("include", "exclude"), [(("*.md", "*.markdown"), ()), (("**/*.md",), ("drafts/**", "b/a/*"))])
def test_wanted_names_what_the_walk_finds(tmp_path: Path, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
    root = _tree(tmp_path / "docs", TREE)
    assert [p for p in sorted(TREE) if wanted(p, include, exclude)] == _paths([root], include=include, exclude=exclude)


def test_a_file_set_is_a_source_and_gets_its_prefix_beside_others(tmp_path: Path) -> None:
    files = FileSet("github:o/r", "o/r/docs", {"b/x.md": b"# X\n", "a.md": b"# A\n"})
    assert [(f.path, read_source(f).text) for f in discover([files])] == [("a.md", "# A\n"), ("b/x.md", "# X\n")]
    local = _tree(tmp_path / "runbooks", ["r.md"])
    assert _paths([local, files]) == ["o/r/docs/a.md", "o/r/docs/b/x.md", "runbooks/r.md"]


@pytest.mark.parametrize(
    ("include", "exclude", "expected"),
    [
        (("*.md",), (), ["b/a/deep.md", "b/c.md", "drafts/wip.md", "z.md"]),
        (("*.md", "*.markdown"), ("drafts/**",), ["a.markdown", "b/a/deep.md", "b/c.md", "z.md"]),
        (("b/**",), (), ["b/a/deep.md", "b/c.md"]),
        (("b/*.md",), (), ["b/c.md"]),
        (("**/*.md",), ("deep.md",), ["b/c.md", "drafts/wip.md", "z.md"]),
        (("*.txt",), (), ["notes.txt"]),
        (("*.MD",), (), ["README.MD"]),
        (("?.md",), (), ["b/c.md", "z.md"]),  # no "/": the file name
        (("[ab]*",), (), ["a.markdown"]),
        (("*.md",), ("drafts/",), ["b/a/deep.md", "b/c.md", "z.md"]),
        (("*.md",), ("a/",), ["b/c.md", "drafts/wip.md", "z.md"]),
        (("*.md",), ("/a/",), ["b/a/deep.md", "b/c.md", "drafts/wip.md", "z.md"]),
        (("*.md",), ("b/a/",), ["b/c.md", "drafts/wip.md", "z.md"]),
    ],
    ids=["md-only", "exclude-folder", "folder-glob", "one-level", "exclude-name", "txt", "case-sensitive",
         "question-mark", "bracket", "folder-slash", "folder-slash-at-any-depth", "folder-slash-at-the-root",
         "folder-slash-with-a-path"],
)
def test_include_exclude(tmp_path: Path, include: tuple[str, ...], exclude: tuple[str, ...],
                         expected: list[str]) -> None:
    root = _tree(tmp_path / "docs", TREE)
    assert _paths([root], include=include, exclude=exclude) == expected


@pytest.mark.parametrize(
    ("path", "pattern", "hit"),
    [
        ("a/b/c.md", "*.md", True),
        ("a/b/c.md", "a/*.md", False),
        ("a/b/c.md", "a/**/*.md", True),
        ("c.md", "**/c.md", True),
        ("a/b/c.md", "/a/b/c.md", True),
        ("a/b/c.md", "b/c.md", False),
    ],
)
def test_matches(path: str, pattern: str, hit: bool) -> None:
    assert matches(path, pattern) is hit


def test_output_file_is_skipped(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs", ["a.md", "out.md"])
    assert _paths([root], skip=[root / "out.md"]) == ["a.md"]


def test_symlink_out_of_root_is_skipped_with_a_warning(tmp_path: Path) -> None:
    outside = _tree(tmp_path / "outside", ["secret.md", "dir/other.md"])
    root = _tree(tmp_path / "docs", ["a.md"])
    (root / "leak.md").symlink_to(outside / "secret.md")
    (root / "linked-dir").symlink_to(outside / "dir", target_is_directory=True)
    (root / "alias.md").symlink_to(root / "a.md")  # inside the root: followed
    warnings: list[str] = []
    assert _paths([root], warn=warnings.append) == ["a.md", "alias.md"]
    assert warnings == [
        "linked-dir: skipped, a symlink to a folder (not followed)",
        "leak.md: skipped, a symlink that leads outside docs",
    ]


def test_several_roots_are_relative_to_their_common_parent(tmp_path: Path) -> None:
    _tree(tmp_path / "repo", ["ops/b.md", "ops/a.md", "dev/guide/x.md", "other/no.md"])
    roots = [tmp_path / "repo" / "ops", tmp_path / "repo" / "dev"]
    assert _paths(roots) == ["dev/guide/x.md", "ops/a.md", "ops/b.md"]


def test_a_single_file_root(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs", ["only.md", "other.md"])
    assert _paths([root / "only.md"]) == ["only.md"]


def test_paths_use_forward_slashes(tmp_path: Path) -> None:
    root = _tree(tmp_path / "docs", ["a/b/c/d.md"])
    [found] = discover([root])
    assert (found.path, found.abspath) == ("a/b/c/d.md", (root / "a/b/c/d.md").resolve())


@pytest.mark.parametrize(
    ("roots", "error"),
    [([], "no source folder given"), (["missing"], "missing: no such file or folder")],
    ids=["none", "missing"],
)
def test_bad_roots(tmp_path: Path, roots: list[str], error: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MdftsError) as err:
        discover([Path(r) for r in roots])
    assert str(err.value) == error


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"# ok\n", "# ok\n"),
        (codecs.BOM_UTF8 + b"# ok\r\n", "# ok\r\n"),
        (codecs.BOM_UTF16_LE + "# ok\n".encode("utf-16-le"), "# ok\n"),
        (codecs.BOM_UTF16_BE + "# ok\n".encode("utf-16-be"), "# ok\n"),
        ("# Ünïcödé\n".encode(), "# Ünïcödé\n"),
    ],
    ids=["utf8", "utf8-bom-crlf", "utf16-le", "utf16-be", "non-ascii"],
)
def test_decode(data: bytes, text: str) -> None:
    assert decode("x.md", data) == text


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (b"# ok\n\xff\n", "bad.md:2: not valid UTF-8"),
        (b"# ok\n\nx\0y\n", "bad.md:3: binary file (NUL byte), not markdown"),
    ],
    ids=["bad-utf8", "nul-byte"],
)
def test_decode_errors_name_the_line(data: bytes, error: str) -> None:
    with pytest.raises(SourceError) as err:
        decode("bad.md", data)
    assert str(err.value) == error


def test_files_share_one_root_and_name_their_file(tmp_path: Path) -> None:
    # A build holds the whole list: one Path per file was most of its memory at 125k files.
    root = _tree(tmp_path / "docs", TREE)
    found = discover([root])
    assert len({id(f.root) for f in found}) == 1
    assert [f.abspath for f in found] == [root.resolve() / f.path for f in found]
    files = FileSet("github:o/r", "o/r/docs", {"b/x.md": b"# X\n"})
    mixed = discover([_tree(tmp_path / "runbooks", ["r.md"]), files])
    assert [(f.path, f.abspath) for f in mixed] == [
        ("o/r/docs/b/x.md", Path("github:o/r", "b/x.md")), ("runbooks/r.md", (tmp_path / "runbooks/r.md").resolve())]
