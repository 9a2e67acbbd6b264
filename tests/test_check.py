"""`mdfts check`: the docs lint, its rules, formats and exit codes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from mdfts.check import Finding, check_docs
from mdfts.cli import cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "check"

EXPECTED_TEXT = """\
check/links.md:3: error: link to img/none.png: no such file [broken-link]
check/links.md:3: error: link to nope.md: no such file [broken-link]
check/links.md:4: error: link to #nowhere: no such heading in this file [broken-anchor]
check/links.md:5: error: link to #uninstall: no such heading in sub/setup.md [broken-anchor]
check/links.md:6: error: link to missing-ref.md: no such file [broken-link]
check/outline.md:7: warning: heading level skips from h2 to h4 ('Too deep') [skipped-level]
check/outline.md:11: warning: heading 'Steps' repeats line 3: its anchor is #steps-1, and links to #steps go to line 3 [duplicate-heading]
check/outline.md:15: info: section 'Empty' is empty [empty-section]
check/prose.md:1: warning: no headings: the whole file is one section; add a # title and ## sections [no-headings]
check/sub/setup.md:7: info: section 'Configure' is empty [empty-section]
"""


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of tests/fixtures/check as ./check, run from its parent: paths print as check/...."""
    shutil.copytree(FIXTURES, tmp_path / "check")
    monkeypatch.chdir(tmp_path)
    return Path("check")


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["check", *args])


def test_text_lists_every_finding_by_path_and_line(docs: Path) -> None:
    result = _run(str(docs))
    assert (result.exit_code, result.stdout) == (1, EXPECTED_TEXT)
    assert result.stderr == "Error: 5 files checked: 5 errors, 3 warnings, 2 info (--fail-on error)\n"


def test_clean_file_has_no_findings(docs: Path) -> None:
    result = _run(str(docs / "good.md"), "--fail-on", "info")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "1 file checked: no findings\n")


@pytest.mark.parametrize(
    ("ignore", "fail_on", "exit_code"),
    [
        ((), "error", 1),
        (("broken-link", "broken-anchor"), "error", 0),
        (("broken-link", "broken-anchor"), "warning", 1),
        (("broken-link", "broken-anchor", "skipped-level", "duplicate-heading", "no-headings"), "warning", 0),
        (("broken-link", "broken-anchor", "skipped-level", "duplicate-heading", "no-headings"), "info", 1),
    ],
    ids=["errors-fail", "no-errors", "warnings-fail", "only-info", "info-fails"],
)
def test_exit_code_follows_fail_on(docs: Path, ignore: tuple[str, ...], fail_on: str, exit_code: int) -> None:
    args = [str(docs), "--fail-on", fail_on]
    for rule in ignore:
        args += ["--ignore", rule]
    assert _run(*args).exit_code == exit_code


def test_github_format_prints_annotations(docs: Path) -> None:
    result = _run(str(docs), "--format", "github", "--ignore", "broken-link", "--ignore", "empty-section")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "::error file=check/links.md,line=4,title=mdfts broken-anchor::link to #nowhere: no such heading in this file",
        "::error file=check/links.md,line=5,title=mdfts broken-anchor::link to #uninstall: no such heading in sub/setup.md",
        "::warning file=check/outline.md,line=7,title=mdfts skipped-level::heading level skips from h2 to h4 ('Too deep')",
        "::warning file=check/outline.md,line=11,title=mdfts duplicate-heading::heading 'Steps' repeats line 3: "
        "its anchor is #steps-1, and links to #steps go to line 3",
        "::warning file=check/prose.md,line=1,title=mdfts no-headings::no headings: the whole file is one section; "
        "add a # title and ## sections",
    ]


def test_github_format_escapes_newlines_and_percent(docs: Path) -> None:
    (docs / "odd%,name.md").write_text("# Odd\n\n[x](gone.md)\n", encoding="utf-8")
    result = _run(str(docs / "odd%,name.md"), "--format", "github")
    assert result.stdout == "::error file=check/odd%25%2Cname.md,line=3,title=mdfts broken-link::link to gone.md: no such file\n"


def test_info_is_a_github_notice(docs: Path) -> None:
    result = _run(str(docs / "sub"), "--format", "github")
    assert (result.exit_code, result.stdout) == (
        0, "::notice file=check/sub/setup.md,line=7,title=mdfts empty-section::section 'Configure' is empty\n")


def test_json_format(docs: Path) -> None:
    result = _run(str(docs), "--json")
    assert result.exit_code == 1
    rows = json.loads(result.stdout)
    assert rows[0] == {"path": "check/links.md", "line": 3, "severity": "error", "rule": "broken-link",
                       "message": "link to img/none.png: no such file"}
    assert [(r["path"], r["line"], r["rule"]) for r in rows] == [
        (line.split(":")[0], int(line.split(":")[1]), line.rsplit("[", 1)[1].rstrip("]"))
        for line in EXPECTED_TEXT.splitlines()
    ]


def test_oversized_sections_use_the_threshold(docs: Path) -> None:
    findings, _ = check_docs([docs / "sub"], max_section_chars=40)
    assert [(f.line, f.rule, f.message) for f in findings if f.rule == "oversized-section"] == [
        (3, "oversized-section", "section 'Install' is 58 characters (more than 40); split it with subheadings"),
        (8, "oversized-section", "section 'Set Things Up' is 68 characters (more than 40); split it with subheadings"),
    ]
    assert not [f for f in check_docs([docs / "sub"])[0] if f.rule == "oversized-section"]


def test_unreadable_and_empty_files(docs: Path) -> None:
    (docs / "bad.md").write_bytes(b"# Bad\n\n\xff\n")
    (docs / "blank.md").write_text("", encoding="utf-8")
    (docs / "yaml.md").write_text("---\ntitle: [\n---\n# Y\n", encoding="utf-8")
    findings, files = check_docs([docs], ignore=["broken-link", "broken-anchor"])
    assert files == 8
    assert [(f.path, f.line, f.severity, f.rule, f.message) for f in findings if f.rule in ("unreadable", "empty-file")] == [
        ("check/bad.md", 3, "error", "unreadable", "not valid UTF-8"),
        ("check/blank.md", 1, "warning", "empty-file", "empty file: nothing to index"),
        ("check/yaml.md", 2, "error", "unreadable", "front matter is not valid YAML"),
    ]


def _check_file(docs: Path, name: str, text: str) -> list[Finding]:
    """`text` written to docs/NAME and checked alone: its findings."""
    (docs / name).write_text(text, encoding="utf-8")
    return check_docs([docs / name])[0]


def test_anchor_in_an_unchecked_markdown_file(docs: Path) -> None:
    # Only links.md is checked; sub/setup.md is read for its anchors when a link points at it.
    findings, _ = check_docs([docs / "links.md"])
    assert [(f.line, f.rule) for f in findings if f.rule == "broken-anchor"] == [(4, "broken-anchor"), (5, "broken-anchor")]


def test_an_id_in_a_comment_or_in_code_is_no_anchor(docs: Path) -> None:
    """id= counts where a browser reads it as an attribute: in an HTML block or inline tag, not in
    a comment (as a heading in one makes no anchor) nor in code."""
    findings = _check_file(docs, "ids.md", (
        "# Ids\n\n[a](#block) [b](#inline) [c](#commented) [d](#fenced) [e](#spanned) [f](#later)\n\n"
        '<div id="block">\n<!-- <a id="commented"></a> -->\n</div>\n\nText <span id="inline"></span> and '
        '`<a id="spanned">`.\n\n<!-- old\n<a name="later"></a>\n-->\n\n```html\n<div id="fenced"></div>\n```\n'
    ))
    assert [f.message for f in findings] == [
        f"link to #{a}: no such heading in this file" for a in ("commented", "fenced", "later", "spanned")
    ]


def test_ids_after_a_run_of_unclosed_tags_are_anchors(docs: Path) -> None:
    """An id= is read from the last "<" before it: 50,000 unclosed "<" in one HTML block took 46 s
    when each was scanned to the next ">" (a bench/stress.py case)."""
    findings = _check_file(docs, "lt.md", (
        "# Lt\n\n[a](#deep) [b](#quoted) [c](#nested) [d](#none)\n\n<div " + "<" * 50_000
        + ' <a id="deep">\n<a title="<" id="quoted"> <p <b name=\'nested\'>\n' + "<" * 50_000 + "\n"
    ))
    assert [f.message for f in findings if f.rule == "broken-anchor"] == ["link to #none: no such heading in this file"]


def test_unknown_rule_is_a_usage_error(docs: Path) -> None:
    result = _run(str(docs), "--ignore", "no-such-rule")
    assert result.exit_code == 2
    assert "--ignore no-such-rule: no such rule" in result.stderr


def test_missing_folder_is_a_one_line_error(tmp_path: Path) -> None:
    result = _run(str(tmp_path / "nope"))
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {tmp_path / 'nope'}: no such file or folder\n")


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["empty"], "empty: no file matches --include *.md *.markdown; nothing to check"),
        (["check", "--include", "*.rst"], "check: no file matches --include *.rst; nothing to check"),
        (["check", "empty", "--exclude", "*"], "check, empty: no file matches --include *.md *.markdown, less "
                                               "--exclude *; nothing to check"),
    ],
    ids=["empty-folder", "include-matches-nothing", "exclude-leaves-nothing"],
)
def test_no_file_to_check_is_an_error(docs: Path, args: list[str], error: str) -> None:
    """A lint that read nothing must not pass: a typo in --include once gave "0 files checked", exit 0."""
    Path("empty").mkdir()
    result = _run(*args)
    assert (result.exit_code, result.stdout, result.stderr) == (1, "", f"Error: {error}\n")


def test_headings_with_their_own_ids_are_no_duplicates(docs: Path) -> None:
    """`### Parameters {#create-parameters}` and `### Parameters {#update-parameters}`: the ids tell
    the two apart, so no link to one lands on the other; a third without an id repeats the text."""
    findings = _check_file(docs, "api.md", (
        "# Api\n\n## Create\n\n### Parameters {#create-parameters}\n\nA.\n\n## Update\n\n"
        "### Parameters {#update-parameters}\n\nB.\n\n### Parameters\n\nC.\n\n### Parameters\n\nD.\n\n"
        "[c](#create-parameters) [u](#update-parameters) [p](#parameters)\n"
    ))
    assert [(f.line, f.rule, f.message) for f in findings] == [
        (19, "duplicate-heading", "heading 'Parameters' repeats line 15: its anchor is #parameters-1, "
                                  "and links to #parameters go to line 15"),
    ]
