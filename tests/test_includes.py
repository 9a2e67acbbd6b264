"""Include directives (MkDocs' `{!file!}`, pymdownx.snippets' `--8<--`): a section is found by
the text of the files it includes, read only from below the source root, bounded, cycles ended."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import mdfts.check
import mdfts.includes
from mdfts.build import build_index
from mdfts.check import check_docs
from mdfts.discover import FileSet
from mdfts.includes import Includes, names
from mdfts.index import open_index

from conftest import run_cli

ERRORS = """\
## Failed to parse the settings

The kiln controller rejects a glaze table it cannot read: `GLAZE_TABLE_PATH` is unset.

## Failed to notify the potter

The bell service `kilnbell` is not configured.
"""

TROUBLE = """\
# Kiln troubleshooting

## Commands

Run `kiln status` to see the controller's state.

## Errors

{!docs/kiln/errors-list.md!}
"""


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _included(db: Path) -> dict[tuple[str, str], str | None]:
    with sqlite3.connect(db) as conn:
        return {(p, h): inc for p, h, inc in conn.execute("select path, heading, included from sections_full")}


def test_a_section_is_found_by_the_text_it_includes(tmp_path: Path) -> None:
    docs = _tree(tmp_path / "repo", {"docs/kiln/troubleshooting.md": TROUBLE, "docs/kiln/errors-list.md": ERRORS,
                                     "docs/glaze.md": "# Glaze\n\nThe controller mixes glaze for the kiln.\n"})
    db = build_index([docs], tmp_path / "x.db").out
    included = _included(db)
    assert included["docs/kiln/troubleshooting.md", "Errors"] == ERRORS
    assert included["docs/kiln/troubleshooting.md", "Commands"] is None
    with open_index(db) as ix:
        # only the included file says "rejects" and "notify": the section that includes it is found
        hits = ix.search("kiln troubleshooting errors rejects notify")
        assert (hits[0].path, hits[0].heading) == ("docs/kiln/troubleshooting.md", "Errors")
        # its body, lines and exact tokens stay its own
        assert hits[0].body.strip().endswith("{!docs/kiln/errors-list.md!}")
        assert (hits[0].start_line, hits[0].end_line) == (7, 9)
        token_hits = ix.token("GLAZE_TABLE_PATH")
        assert {h.path for h in token_hits} == {"docs/kiln/errors-list.md"}


def test_snippets_lines_and_blocks_are_read_and_an_escaped_one_is_not(tmp_path: Path) -> None:
    docs = _tree(tmp_path / "docs", {
        "a.md": "# A\n\n## One\n\n--8<-- \"parts/one.md\"\n\n## Block\n\n--8<--\nparts/two.md\nparts/three.md:4:9\n--8<--\n\n"
                "## Escaped\n\n;--8<-- \"parts/one.md\"\n",
        "parts/one.md": "alpha words\n", "parts/two.md": "bravo words\n", "parts/three.md": "charlie words\n",
    })
    included = _included(build_index([docs], tmp_path / "x.db").out)
    assert included["a.md", "One"] == "alpha words\n"
    assert included["a.md", "Block"] == "bravo words\n"  # three.md has no line 4: the site shows nothing of it
    assert included["a.md", "Escaped"] is None


STEPS = "".join(f"step {n}\n" for n in range(1, 11))
SECTIONS = """\
# Shared steps

--8<-- [start:install]
install the kiln
--8<-- [start:inner]
fire it once
--8<-- [end:inner]
--8<-- [end:install]
;--8<-- [start:shown]
the end
"""


@pytest.mark.parametrize(("directive", "shown"), [
    ("{% include_relative steps.md %}", STEPS),
    ("{%- include_relative parts/one.md -%}", "alpha words\n"),  # from the page's folder
    ("{% include_relative {{ page.part }} %}", None),  # a Liquid variable: not read
    ("```{include} steps.md\n```", STEPS),
    ("```{include} steps.md\n:start-line: 2\n:end-line: 4\n```", "step 3\nstep 4\n"),  # 0-based, end not shown
    (":::{include} steps.md\n:start-after: step 8\n:::", "\nstep 9\nstep 10\n"),
    ("~~~{include} steps.md\n:end-before: step 2\n~~~", "step 1\n"),
    ("```{include} steps.md\n:start-after: no such text\n```", None),
    ("```{literalinclude} steps.md\n:language: text\n:lines: 2,5-6,9-\n```", "step 2\nstep 5\nstep 6\nstep 9\nstep 10\n"),
    ("```{literalinclude} steps.md\n:start-after: step 3\n:end-at: step 5\n```", "step 4\nstep 5\n"),  # by lines
    ("```{literalinclude} steps.md\n:start-at: step 8\n:end-before: step 10\n:lines: 2\n```", "step 9\n"),
    ("```{literalinclude} steps.md\n:end-before: step 99\n```", None),
])
def test_jekyll_and_myst_includes_are_read(tmp_path: Path, directive: str, shown: str | None) -> None:
    """Jekyll's include_relative and MyST's include directive (start-line, end-line, start-after,
    end-before as docutils reads them) and literalinclude (lines, start-at, start-after, end-at,
    end-before as Sphinx reads them, by lines) are read as the other directives are."""
    docs = _tree(tmp_path / "docs", {"guide/a.md": f"# A\n\n{directive}\n", "guide/parts/one.md": "alpha words\n",
                                     "steps.md": STEPS})
    assert _included(build_index([docs], tmp_path / "x.db").out)["guide/a.md", "A"] == shown


@pytest.mark.parametrize(("directive", "shown"), [
    ('--8<-- "steps.md:3:5"', "step 3\nstep 4\nstep 5"),
    ('--8<-- "steps.md:9"', "step 9\nstep 10\n"),  # line 9 to the end
    ('--8<-- "steps.md::2"', "step 1\nstep 2"),
    ('--8<-- "steps.md:-2:"', "step 10\n"),  # from the end: the empty line after the last newline counts
    ('--8<-- "steps.md:1:1,4:4"', "step 1\nstep 4"),
    ('--8<-- "steps.md:40:50"', None),  # past the end: nothing shown
    ("{!steps.md!lines=2 7-8 1}", "step 2\nstep 7\nstep 8\nstep 1"),
    ('--8<-- "shared.md:install"', "install the kiln\nfire it once"),  # the section, less inner marks
    ('--8<-- "shared.md:inner"', "fire it once"),
    ('--8<-- "shared.md:missing"', None),
    ('--8<-- "shared.md"', "# Shared steps\n\ninstall the kiln\nfire it once\n--8<-- [start:shown]\nthe end\n"),
])
def test_a_snippet_shows_the_lines_or_section_it_names(tmp_path: Path, directive: str, shown: str | None) -> None:
    """As pymdownx.snippets and markdown-include show them: the lines (1-based, end included),
    a section between its start and end lines, and no section's marks in a whole file."""
    docs = _tree(tmp_path / "docs", {"a.md": f"# A\n\n{directive}\n", "steps.md": STEPS, "shared.md": SECTIONS})
    assert _included(build_index([docs], tmp_path / "x.db").out)["a.md", "A"] == shown


@pytest.mark.parametrize(("directive", "shown"), [
    ('--8<-- "crlf.md"', "# Steps\n\nstep 1\nstep 2\n"),
    ('--8<-- "crlf.md:3:4"', "step 1\nstep 2"),
    ("{!crlf.md!lines=4}", "step 2"),
    ('--8<-- "cr.md:3:3"', "step 1"),
])
def test_an_included_file_reads_its_line_breaks_as_the_page_does(tmp_path: Path, directive: str, shown: str) -> None:
    """A file written with CRLF (or CR) line breaks is read as the page is (normalize_text): its
    lines end in LF, so no carriage return reaches the indexed text."""
    docs = _tree(tmp_path / "docs", {"a.md": f"# A\n\n{directive}\n"})
    (docs / "crlf.md").write_bytes(b"# Steps\r\n\r\nstep 1\r\nstep 2\r\n")
    (docs / "cr.md").write_bytes(b"# Steps\r\rstep 1\rstep 2\r")
    assert _included(build_index([docs], tmp_path / "x.db").out)["a.md", "A"] == shown


def test_names_are_read_from_the_root_the_file_or_the_roots_parent_and_never_outside(tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("the secret\n")
    docs = _tree(tmp_path / "repo" / "docs", {
        "guide/page.md": "# Page\n\n## Here\n\n{!near.md!}\n\n## Rooted\n\n{!docs/far/far.md!}\n\n"
                         "## Up\n\n{!../../../secret.md!}\n\n## Linked\n\n{!link.md!}\n\n## Absent\n\n{!nowhere.md!}\n",
        "guide/near.md": "near text\n", "far/far.md": "far text\n",
    })
    os.symlink(outside, docs / "guide" / "link.md")
    included = _included(build_index([docs], tmp_path / "x.db").out)
    assert included["guide/page.md", "Here"] == "near text\n"
    # (a build of docs/ whose pages name files from the project's root, docs/ first)
    assert included["guide/page.md", "Rooted"] == "far text\n"
    assert included["guide/page.md", "Up"] is None
    assert included["guide/page.md", "Linked"] is None
    assert included["guide/page.md", "Absent"] is None


def test_nested_includes_are_followed_and_a_cycle_ends(tmp_path: Path) -> None:
    docs = _tree(tmp_path / "docs", {"a.md": "# A\n\n{!b.md!}\n", "b.md": "bee\n\n{!c.md!}\n", "c.md": "sea\n\n{!a.md!}\n{!b.md!}\n"})
    included = _included(build_index([docs], tmp_path / "x.db").out)
    # a → b → c, and c's a and b are already on the way in
    assert included["a.md", "A"] == "bee\n\n{!c.md!}\n\nsea\n\n{!a.md!}\n{!b.md!}\n"


def test_a_deep_chain_stops_at_the_depth_and_the_text_at_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = {f"f{i}.md": f"level {i}\n{{!f{i + 1}.md!}}\n" for i in range(10)}
    docs = _tree(tmp_path / "docs", {"top.md": "# Top\n\n{!f0.md!}\n", **files})
    read = Includes(docs, "top.md", 20).text("{!f0.md!}")
    assert read is not None and read[0].count("level") == mdfts.includes.MAX_DEPTH
    assert read[1] == ("f0.md", "f1.md", "f2.md")  # the files, in the order read
    # a document's included text is bounded, its sections in order: what is left is cut
    monkeypatch.setattr(mdfts.includes, "MIN_BYTES", 12)
    includes = Includes(docs, "top.md", 0)
    assert includes.text("{!f0.md!}") == ("level 0\n{!f1", ("f0.md",))  # 12 bytes, then nothing more
    assert includes.text("{!f5.md!}") is None
    assert Includes(docs, "top.md", 1).text("{!f0.md!}") == ("level 0\n{!f1.md!", ("f0.md",))  # 16 x its size


def test_names_in_order_and_what_is_no_directive() -> None:
    text = 'x {!a.md!} y\n--8<-- "b.md"\n`${{{!variable}}}`\n--8<-- \'c.md\'\n{! d.md !lines=1 3}\n'
    assert names(text) == ["a.md", "b.md", "c.md", "d.md"]
    assert names("--8<--\n; skipped.md\ne.md\n--8<--\n;--8<--\nf.md\n;--8<--\n") == ["e.md"]


def test_an_incremental_build_reads_a_changed_included_file(tmp_path: Path) -> None:
    docs = _tree(tmp_path / "repo", {"docs/kiln/troubleshooting.md": TROUBLE, "docs/kiln/errors-list.md": ERRORS})
    old = build_index([docs], tmp_path / "old.db").out
    (docs / "docs/kiln/errors-list.md").write_text("## Cracked shelves\n\nReplace the shelf.\n")
    new = build_index([docs], tmp_path / "new.db", previous=old)
    full = build_index([docs], tmp_path / "full.db", workers=2)
    assert _included(new.out) == _included(full.out)
    assert _included(new.out)["docs/kiln/troubleshooting.md", "Errors"] == "## Cracked shelves\n\nReplace the shelf.\n"
    assert new.reused == 0  # the changed file, and the one whose includes may have changed


def _rows(db: Path) -> list[tuple[object, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select path, heading, start_line, body, included, included_files "
                            "from sections_full order by path, start_line").fetchall()


def _in_memory(folder: Path, below: str, prefix: str) -> FileSet:
    """`folder`'s files as a github: source's download holds them: below the repository's `below`."""
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.md"))}
    return FileSet("github:acme/kilns", prefix, files, folder=below)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_github_source_reads_includes_as_a_checkout_does(tmp_path: Path, workers: int) -> None:
    """The same files, on disk and as a GitHub download holds them in memory, give the same rows:
    root, folder and root's-parent lookups, nested includes and what is not read (outside the
    folder, absent). With worker processes too: a file that includes others is read here."""
    repo = _tree(tmp_path / "repo", {
        "docs/kiln/troubleshooting.md": TROUBLE, "docs/kiln/errors-list.md": ERRORS,
        "docs/guide/page.md": "# Page\n\n## Here\n\n{!near.md!}\n\n## Rooted\n\n{!kiln/errors-list.md!}\n\n"
                              "## Up\n\n{!../secret.md!}\n\n## Absent\n\n{!nowhere.md!}\n",
        "docs/guide/near.md": "near text\n\n--8<-- \"../glaze.md\"\n",
        "docs/glaze.md": "# Glaze\n\nThe controller mixes glaze.\n",
        "secret.md": "the secret\n",
    })
    on_disk = build_index([repo / "docs"], tmp_path / "disk.db", workers=1).out
    remote = _in_memory(repo / "docs", "docs", "acme/kilns/docs")
    in_memory = build_index([remote], tmp_path / "memory.db", workers=workers).out
    rows = _rows(in_memory)
    assert rows == _rows(on_disk)
    included = {(r[0], r[1]): r[4] for r in rows}
    assert included["kiln/troubleshooting.md", "Errors"] == ERRORS  # {!docs/kiln/...!}: the root's parent
    assert included["guide/page.md", "Here"] == "near text\n\n--8<-- \"../glaze.md\"\n\n# Glaze\n\nThe controller mixes glaze.\n"
    assert included["guide/page.md", "Rooted"] == ERRORS
    assert included["guide/page.md", "Up"] is None and included["guide/page.md", "Absent"] is None
    with open_index(in_memory) as ix:
        hits = ix.search("kiln troubleshooting errors rejects notify")
        assert (hits[0].path, hits[0].heading) == ("kiln/troubleshooting.md", "Errors")


def test_a_github_source_beside_a_folder_names_included_files_by_their_prefixed_paths(tmp_path: Path) -> None:
    repo = _tree(tmp_path / "repo", {"docs/kiln/troubleshooting.md": TROUBLE, "docs/kiln/errors-list.md": ERRORS})
    local = _tree(tmp_path / "local", {"notes.md": "# Notes\n\n{!kiln/errors-list.md!}\n"})
    remote = _in_memory(repo / "docs", "docs", "acme/kilns/docs")
    db = build_index([remote, local], tmp_path / "x.db").out
    files = {(r[0], r[1]): r[5] for r in _rows(db)}
    assert json.loads(str(files["acme/kilns/docs/kiln/troubleshooting.md", "Errors"])) == ["acme/kilns/docs/kiln/errors-list.md"]
    assert files["local/notes.md", "Notes"] is None  # a folder reads from disk only: kiln/ is not below it
    with open_index(db) as ix:  # the readers find the included file's sections by that path
        hit = ix.search("kiln troubleshooting errors rejects notify")[0]
        assert hit.path == "acme/kilns/docs/kiln/troubleshooting.md"
        assert "acme/kilns/docs/kiln/errors-list.md" in {n.path for n in ix.neighbors(hit.ref)}


def test_check_warns_of_an_include_the_build_cannot_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.md"
    outside.write_text("the secret\n")
    docs = _tree(tmp_path / "docs", {"a.md": "# A\n\n{!b.md!}\n\n{!missing.md!}\n\n--8<-- \"../secret.md\"\n", "b.md": "# B\n"})
    findings, _ = check_docs([docs])
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.severity, f.rule) for f in findings if f.rule == "broken-include"] == [
        ("a.md", 5, "warning", "broken-include"), ("a.md", 7, "warning", "broken-include")]
    assert "missing.md" in findings[0].message


def test_check_warns_of_an_include_whose_lines_or_section_the_file_has_not(tmp_path: Path) -> None:
    docs = _tree(tmp_path / "docs", {
        "a.md": '# A\n\n--8<-- "steps.md:40:50"\n\n--8<-- "shared.md:nowhere"\n\n{!steps.md!lines=90}\n\n'
                '--8<-- "steps.md:2:3"\n\n--8<-- "shared.md:install"\n',
        "steps.md": STEPS, "shared.md": SECTIONS})
    findings = [f for f in check_docs([docs])[0] if f.rule == "broken-include"]
    assert [f.line for f in findings] == [3, 5, 7]
    assert findings[0].message == ("include of steps.md:40:50: the file has not the lines or text named, so nothing "
                                   "of it is shown or indexed here")
    assert "has not lines 90" in findings[2].message


def test_a_document_looks_up_a_bounded_number_of_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 100,000 names of missing files took 3 s to look up; a page names a handful
    monkeypatch.setattr(mdfts.includes, "MAX_NAMES", 3)
    monkeypatch.setattr(mdfts.check, "MAX_NAMES", 3)
    docs = _tree(tmp_path / "docs", {"a.md": "# A\n\n" + "".join(f"{{!f{i}.md!}}\n{{!f{i}.md!}}\n" for i in range(5)),
                                     **{f"f{i}.md": f"part {i}\n" for i in range(5)}})
    # a repeat is shown again, as the site shows it (looked up once); the fourth distinct name and
    # after are not read
    assert Includes(docs, "a.md", 100).text((docs / "a.md").read_text()) == ("\n".join(
        f"part {i}\n" for i in (0, 0, 1, 1, 2, 2)), ("f0.md", "f1.md", "f2.md"))
    findings, _ = check_docs([docs])
    broken = [f for f in findings if f.rule == "broken-include"]
    assert [f.line for f in broken] == [9] and "first 3 names" in broken[0].message


def _kiln(tmp_path: Path) -> Path:
    docs = _tree(tmp_path / "repo", {
        "docs/kiln/troubleshooting.md": TROUBLE, "docs/kiln/errors-list.md": ERRORS,
        "docs/glaze.md": "# Glaze\n\nThe kiln controller mixes glaze; notify the potter when it rejects a batch.\n"})
    return build_index([docs], tmp_path / "x.db").out


def test_neighbors_give_the_sections_of_the_included_files(tmp_path: Path) -> None:
    with open_index(_kiln(tmp_path)) as ix:
        got = [(h.relation, h.path, h.heading) for h in ix.neighbors("docs/kiln/troubleshooting.md#errors")]
    assert got == [
        ("self", "docs/kiln/troubleshooting.md", "Errors"),
        ("parent", "docs/kiln/troubleshooting.md", "Kiln troubleshooting"),
        ("previous", "docs/kiln/troubleshooting.md", "Commands"),
        ("included", "docs/kiln/errors-list.md", "Failed to parse the settings"),
        ("included", "docs/kiln/errors-list.md", "Failed to notify the potter"),
    ]


def test_context_gives_what_a_match_includes_before_its_other_relatives(tmp_path: Path) -> None:
    q = "kiln troubleshooting errors rejects notify"
    with open_index(_kiln(tmp_path)) as ix:
        # the include-only match, with the sections the site shows in its place (printed after
        # the page that includes them), and its previous section
        ctx = ix.context(q, max_tokens=1200, format="json", limit=1)
        assert [(b.role, b.hit.path, b.hit.heading) for b in ctx.blocks] == [
            ("previous", "docs/kiln/troubleshooting.md", "Commands"),
            ("match", "docs/kiln/troubleshooting.md", "Errors"),
            ("included", "docs/kiln/errors-list.md", "Failed to parse the settings"),
            ("included", "docs/kiln/errors-list.md", "Failed to notify the potter"),
        ]
        assert '"role": "included"' in ctx.text and '"of": 2' in ctx.text
        # offered before the other relatives: with room for the match alone, they are the first
        # omitted; and no relative displaces a match
        tight = ix.context(q, max_tokens=300, format="json", limit=1)
        assert [b.role for b in tight.blocks] == ["match"]
        assert tight.omitted == ("docs/kiln/errors-list.md#failed-to-parse-the-settings",
                                 "docs/kiln/errors-list.md#failed-to-notify-the-potter",
                                 "docs/kiln/troubleshooting.md#commands")


def test_show_names_the_files_a_section_includes(tmp_path: Path) -> None:
    db = _kiln(tmp_path)
    shown = subprocess.run([sys.executable, "-m", "mdfts", "show", str(db), "docs/kiln/troubleshooting.md#errors"],
                           capture_output=True, text=True, check=True).stdout
    assert shown.endswith(f"{{!docs/kiln/errors-list.md!}}\n[includes mdfts show {db} docs/kiln/errors-list.md]\n")
    as_json = run_cli(["show", db, "docs/kiln/troubleshooting.md#errors", "--json"])
    assert json.loads(as_json.stdout)[0]["includes"] == ["docs/kiln/errors-list.md"]
    assert "includes" not in run_cli(["show", db, "docs/kiln/troubleshooting.md#commands"]).stdout


def test_with_several_sources_each_reads_only_below_its_own_folder(tmp_path: Path) -> None:
    """Several folders (or a folder beside a github: source) share a parent for their paths, but a
    page reads includes only from below its own source folder: not a sibling source, not the
    files beside them."""
    (tmp_path / "secret.md").write_text("the secret\n")
    kiln = _tree(tmp_path / "kiln", {"a.md": "# A\n\n## Up\n\n{!../secret.md!}\n\n## Sibling\n\n{!../glaze/b.md!}\n\n"
                                             "## Own\n\n{!c.md!}\n\n## Rooted\n\n{!kiln/c.md!}\n", "c.md": "own text\n"})
    glaze = _tree(tmp_path / "glaze", {"b.md": "# B\n\nglaze text\n"})
    remote = FileSet("github:acme/kilns", "acme/kilns", {"r.md": b"# R\n"})
    for roots in ([kiln, glaze], [kiln, remote]):
        included = _included(build_index(roots, tmp_path / "x.db", force=True).out)
        assert included["kiln/a.md", "Up"] is None
        assert included["kiln/a.md", "Sibling"] is None
        assert included["kiln/a.md", "Own"] == "own text\n"
        assert included["kiln/a.md", "Rooted"] == "own text\n"  # the folder's parent: kiln/c.md
    # and check says so, naming the page's own folder
    findings, _ = check_docs([kiln, glaze])
    broken = [f for f in findings if f.rule == "broken-include"]
    assert [(f.path.rsplit("/", 1)[-1], f.line) for f in broken] == [("a.md", 5), ("a.md", 9)]
    assert "below kiln to read" in broken[0].message


def test_hostile_lines_do_not_freeze_the_build(tmp_path: Path) -> None:
    """A line of a million dashes before an 8< (a section mark's pattern used to backtrack over
    them from each one: ~4 minutes), MyST include and option lines with a million spaces in them,
    and a snippet name of 200,000 line groups that are no suffix (pymdownx's pattern for it is
    quadratic: 8.6 ms at 1,000 characters): the build reads them in a moment, not minutes or
    hours (the subprocess's timeout fails the test)."""
    spaces = " " * 1_000_000
    groups = ":1,1" * 200_000 + ","
    docs = _tree(tmp_path / "docs", {
        "a.md": f"# A\n\n--8<-- \"dashes.md\"\n\n```{{include}} steps.md{spaces}x\n:start-after:{spaces}y\n```\n"
                f"\n--8<-- \"steps.md{groups}\"\n",
        "dashes.md": "-" * 1_000_000 + "8<- x\n", "steps.md": STEPS})
    out = tmp_path / "x.db"
    done = subprocess.run([sys.executable, "-m", "mdfts", "build", str(docs), "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert _included(out)["a.md", "A"] == "-" * 1_000_000 + "8<- x\n"


def test_a_snippet_suffix_is_found_where_pymdownx_finds_it() -> None:
    """_suffix_at against pymdownx.snippets' own pattern (RE_SNIPPET_FILE), on names short enough
    for that pattern to be quick: the same place, or none, for every one."""
    import random
    import re

    pattern = re.compile(r"(?i)(.*?)(?:((?::-?[0-9]*){1,2}(?:(?:,(?=[-0-9:])-?[0-9]*)(?::-?[0-9]*)?)*)"
                         r"|(:[a-z][-_0-9a-z]*))?$")
    rng = random.Random(7)
    for _ in range(20_000):
        name = "".join(rng.choice("ab.-:,01:,9-_Z/") for _ in range(rng.randint(0, 14)))
        m = pattern.match(name)
        assert m is not None
        expected = len(m.group(1)) if m.group(2) or m.group(3) else None
        assert mdfts.includes._suffix_at(name) == expected, name


def test_lines_named_again_and_again_stop_at_the_documents_room(tmp_path: Path) -> None:
    """A selection may name the same lines thousands of times: markdown-include's lines=, a
    snippet's suffix, a literalinclude's :lines:. Each of the three below names a 200 KB file 5,000
    times over (1 GB of text, and over 1 GB of peak memory, before); the build stops at the
    document's room, and its peak memory stays that of a small build."""
    big = "".join(f"{n:04d} " + "x" * 94 + "\n" for n in range(2_000))
    again = " ".join(["1-2000"] * 5_000)
    docs = _tree(tmp_path / "docs", {
        "a.md": f"# A\n\n{{!big.md!lines={again}}}\n\n## B\n\n--8<-- \"big.md:" + ",".join(["1:2000"] * 5_000) + "\"\n\n"
                "## C\n\n```{literalinclude} big.md\n:lines: " + ",".join(["1-2000"] * 5_000) + "\n```\n",
        "big.md": big})
    out = tmp_path / "x.db"
    probe = ("import resource, subprocess, sys; "
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120); "
             "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    done = subprocess.run([sys.executable, "-c", probe, sys.executable, "-m", "mdfts", "build", str(docs), "-o", str(out),
                           "-q"], capture_output=True, text=True, timeout=180)
    code, peak_kb = map(int, done.stdout.split())
    assert code == 0
    assert peak_kb < 300 * 1024, f"peak RSS {peak_kb / 1024:.0f} MB"
    included = _included(out)
    # the document's room (16 times its size, at most 1 MiB) holds the first selection's
    # first megabyte; the others get what is left of it
    assert included["a.md", "A"].startswith(big[:1000]) and len(included["a.md", "A"]) <= (1 << 20)
    assert sum(len(v or "") for v in included.values()) <= (1 << 20)


def test_a_page_reads_a_bounded_number_of_bytes(tmp_path: Path) -> None:
    """One line of a 1 MB file named 100,000 times (each a whole read of the file), and a one-byte
    file named 100,000 times: a document reads at most READS bytes, a read counting READ_COST at
    least (before, only the room bounded it: ~10,000 reads of the 1 MB file, 8 s of this build)."""
    big = "".join(f"{n:05d} " + "x" * 94 + "\n" for n in range(10_000))
    docs = _tree(tmp_path / "docs", {
        "a.md": "# A\n\n" + '--8<-- "big.md:1:1"\n' * 100_000 + "\n## B\n\n" + "{!one.md!}\n" * 100_000,
        "big.md": big, "one.md": "x"})
    out = tmp_path / "x.db"
    done = subprocess.run([sys.executable, "-m", "mdfts", "build", str(docs), "-o", str(out), "-q"],
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    included = _included(out)
    shown = -(-mdfts.includes.READS // len(big))  # reads of the 1 MB file until the budget is spent
    assert included["a.md", "A"] == "\n".join(["00000 " + "x" * 94] * shown)
    assert included["a.md", "B"] is None  # nothing left to read
