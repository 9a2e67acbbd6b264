"""`mdfts diff`: documents, sections and exact tokens added, removed and changed between two indexes."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from mdfts.build import build_index
from mdfts.cli import cli
from mdfts.diff import diff_indexes

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "incremental"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """old.db from the fixtures; new.db after a rename of an ENV var, a new file, a deleted file
    and a new section pushing the next one down."""
    docs = tmp_path / "docs"
    shutil.copytree(FIXTURES, docs)
    old = tmp_path / "old.db"
    build_index([docs], old)
    setup = docs / "guides" / "setup.md"
    setup.write_text(setup.read_text(encoding="utf-8").replace("PAYMENTS_DB_URL", "PAYMENTS_DATABASE_URL"),
                     encoding="utf-8")
    deploy = docs / "guides" / "deploy.md"
    deploy.write_text(deploy.read_text(encoding="utf-8").replace(
        "## Rollback", "## Canary\n\nShip to 5% with `--canary`.\n\n## Rollback"), encoding="utf-8")
    (docs / "notes.md").unlink()
    (docs / "guides" / "alerts.md").write_text("# Alerts\n\nPage with `--urgent`; set `LOG_LEVEL`.\n", encoding="utf-8")
    new = tmp_path / "new.db"
    build_index([docs], new)
    return old, new


def test_diff_finds_each_kind_of_change(pair: tuple[Path, Path]) -> None:
    d = diff_indexes(*pair)
    assert [(x["status"], x["path"], x["old_sections"], x["new_sections"]) for x in d["documents"]] == [
        ("added", "guides/alerts.md", None, 1),
        ("changed", "guides/deploy.md", 4, 5),
        ("changed", "guides/setup.md", 5, 5),
        ("removed", "notes.md", 1, None),
    ]
    assert [(x["status"], x["path"], x["anchor"], x["old_lines"], x["new_lines"]) for x in d["sections"]] == [
        ("added", "guides/alerts.md", "alerts", None, [1, 3]),
        ("added", "guides/deploy.md", "canary", None, [8, 11]),
        # Moved down by the new section, text unchanged: not listed. Changed: the text differs.
        ("changed", "guides/setup.md", "setup", [7, 10], [7, 10]),
        ("removed", "notes.md", "", [1, 1], None),
    ]
    # Per document: what a changed document gained or lost, and how many others hold the token.
    assert [(t["status"], t["token"], t["kind"], [(p["path"], p["anchor"]) for p in t["places"]],
             t["other_documents"]) for t in d["tokens"]] == [
        ("added", "--canary", "cli_flag", [("guides/deploy.md", "canary")], 0),
        ("added", "--urgent", "cli_flag", [("guides/alerts.md", "alerts")], 0),
        ("added", "LOG_LEVEL", "env_var", [("guides/alerts.md", "alerts")], 1),
        ("added", "PAYMENTS_DATABASE_URL", "env_var", [("guides/setup.md", "setup")], 0),
        ("removed", "NOTES_TOKEN", "env_var", [("notes.md", "")], 0),
        ("removed", "PAYMENTS_DB_URL", "env_var", [("guides/setup.md", "setup")], 1),
    ]
    assert d["summary"] == {
        "documents": {"added": 1, "removed": 1, "changed": 2},
        "sections": {"added": 2, "removed": 1, "changed": 1},
        "tokens": {"added": 4, "removed": 2},
    }


def test_same_index_has_no_changes(pair: tuple[Path, Path]) -> None:
    old, _ = pair
    d = diff_indexes(old, old)
    assert (d["documents"], d["sections"], d["tokens"]) == ([], [], [])
    result = CliRunner().invoke(cli, ["diff", str(old), str(old), "--format", "markdown"])
    assert (result.exit_code, result.stdout) == (
        0, "### Docs index: no changes\n\nNo document, section or exact token differs.\n")


def test_text_output(pair: tuple[Path, Path]) -> None:
    old, new = pair
    result = CliRunner().invoke(cli, ["diff", str(old), str(new)])
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"{old} → {new}: documents: 1 added, 1 removed, 2 changed; sections: 2 added, 1 removed, 1 changed; "
        "exact tokens: 4 added, 2 removed\n"
        "\n"
        "documents\n"
        "  + guides/alerts.md  (1 section)\n"
        "  ~ guides/deploy.md  (4 → 5 sections)\n"
        "  ~ guides/setup.md  (5 → 5 sections)\n"
        "  - notes.md  (1 section)\n"
        "\n"
        "sections of changed documents\n"
        "  + guides/deploy.md#canary  lines 8-11\n"
        "  ~ guides/setup.md#setup    lines 7-10\n"
        "\n"
        "exact tokens\n"
        "  + --canary (cli_flag)              guides/deploy.md:8  (new to the index)\n"
        "  + --urgent (cli_flag)              guides/alerts.md:1  (new to the index)\n"
        "  + LOG_LEVEL (env_var)              guides/alerts.md:1  (in 1 other document before)\n"
        "  + PAYMENTS_DATABASE_URL (env_var)  guides/setup.md:7  (new to the index)\n"
        "  - NOTES_TOKEN (env_var)            notes.md:1  (gone from the index)\n"
        "  - PAYMENTS_DB_URL (env_var)        guides/setup.md:7  (still in 1 other document)\n"
    )


def test_markdown_output_is_a_pr_comment(pair: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(cli, ["diff", *map(str, pair), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    md = result.stdout
    assert md.startswith("### Docs index changes\n\ndocuments: 1 added, 1 removed, 2 changed · ")
    assert "| **removed** | `notes.md` | 1 |\n" in md
    assert "| changed | `guides/deploy.md` | 4 → 5 |\n" in md
    assert "| added | `guides/deploy.md#canary` | Canary | 8-11 |\n" in md
    assert "| **removed** | `PAYMENTS_DB_URL` | env_var | `guides/setup.md:7` | still in 1 other document |\n" in md
    assert "| added | `PAYMENTS_DATABASE_URL` | env_var | `guides/setup.md:7` | new to the index |\n" in md


def test_json_output_round_trips(pair: tuple[Path, Path]) -> None:
    result = CliRunner().invoke(cli, ["diff", *map(str, pair), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == diff_indexes(*pair)


def test_not_an_index_is_a_one_line_error(pair: tuple[Path, Path], tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as conn:
        conn.execute("create table t (x)")
    result = CliRunner().invoke(cli, ["diff", str(pair[0]), str(other)])
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == f"Error: {other}: not an mdfts index (application_id 0); build one with mdfts build\n"


def test_markdown_tables_are_capped(pair: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import mdfts.output

    monkeypatch.setattr(mdfts.output, "MAX_ROWS", 2)
    md = mdfts.output.diff_markdown(diff_indexes(*pair))
    assert "\n…and 2 more documents; `mdfts diff --json` lists them all.\n" in md
    assert "\n…and 4 more exact tokens; `mdfts diff --json` lists them all.\n" in md
    assert "`notes.md`" not in md


def test_a_token_that_moved_says_where_it_was_and_where_it_still_is(tmp_path: Path) -> None:
    """An added token's count is of the old index, a removed one's of the new: a token moved from
    two documents to a third was "already in 2 other documents" of an index that had it once."""
    docs = tmp_path / "docs"
    docs.mkdir()
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    for name, text in (("a.md", "Set `KILN_TEMP_MAX`."), ("b.md", "Set `KILN_TEMP_MAX` too."), ("c.md", "Not yet.")):
        (docs / name).write_text(f"# {name[0].upper()}\n\n{text}\n", encoding="utf-8")
    build_index([docs], old)
    for name, text in (("a.md", "Gone."), ("b.md", "Gone too."), ("c.md", "Set `KILN_TEMP_MAX`.")):
        (docs / name).write_text(f"# {name[0].upper()}\n\n{text}\n", encoding="utf-8")
    build_index([docs], new)
    assert [(t["status"], [p["path"] for p in t["places"]], t["other_documents"])
            for t in diff_indexes(old, new)["tokens"]] == [("added", ["c.md"], 2), ("removed", ["a.md", "b.md"], 1)]
    result = CliRunner().invoke(cli, ["diff", str(old), str(new)])
    assert result.stdout.split("\n\n")[-1] == (
        "exact tokens\n"
        "  + KILN_TEMP_MAX (env_var)  c.md:1  (in 2 other documents before)\n"
        "  - KILN_TEMP_MAX (env_var)  a.md:1, b.md:1  (still in 1 other document)\n")
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "markdown"])
    assert "| added | `KILN_TEMP_MAX` | env_var | `c.md:1` | in 2 other documents before |\n" in result.stdout


def test_markdown_places_stay_inside_their_cell(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a|b.md").write_text("# Pipe\n\nText.\n", encoding="utf-8")
    (docs / "c`d.md").write_text("# Tick\n\nText.\n", encoding="utf-8")
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    build_index([docs], old)
    for name in ("a|b.md", "c`d.md"):
        (docs / name).write_text("# Doc\n\nSet `NEW_VAR`.\n", encoding="utf-8")
    build_index([docs], new)
    result = CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "| added | `NEW_VAR` | env_var | `a\\|b.md:1`, ``c`d.md:1`` | new to the index |\n" in result.stdout


def test_a_heading_with_an_empty_anchor_is_not_the_lead_text(tmp_path: Path) -> None:
    """`# !!!` has GitHub's empty anchor, as the lead text does: matched on path and anchor alone, each
    was compared with both, and two changed sections came out as four, two of them "moved"."""
    docs = tmp_path / "docs"
    docs.mkdir()
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    (docs / "a.md").write_text("Lead `LEAD_A`.\n\n# !!!\n\nBang `BANG_A`.\n", encoding="utf-8")
    build_index([docs], old)
    (docs / "a.md").write_text("Lead `LEAD_B`.\n\n# !!!\n\nBang `BANG_B`.\n", encoding="utf-8")
    build_index([docs], new)
    d = diff_indexes(old, new)
    assert [(x["status"], x["anchor"], x["level"], x["old_lines"], x["new_lines"]) for x in d["sections"]] == [
        ("changed", "", 0, [1, 2], [1, 2]), ("changed", "", 1, [3, 5], [3, 5])]
    assert d["summary"]["sections"] == {"added": 0, "removed": 0, "changed": 2}
    result = CliRunner().invoke(cli, ["diff", str(old), str(new)])
    assert result.stdout.split("\n\n")[2] == "sections of changed documents\n  ~ a.md (lead text)  lines 1-2\n  ~ a.md#             lines 3-5"


def test_a_section_whose_included_file_changed_is_changed(tmp_path: Path) -> None:
    """A page whose bytes are the same but whose include directive names a file that changed: what
    search finds its section by changed, and the diff says so (included), in JSON, text and
    markdown, also when the included file is no document of the index (a YAML snippet)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    (docs / "page.md").write_text("# Page\n\n## Errors\n\n{!errors.md!}\n\n## Example\n\n--8<-- \"example.yaml\"\n",
                                  encoding="utf-8")
    (docs / "errors.md").write_text("# Errors\n\nThe kiln rejects the glaze.\n", encoding="utf-8")
    (docs / "example.yaml").write_text("kiln: hot\n", encoding="utf-8")
    build_index([docs], old)
    (docs / "errors.md").write_text("# Errors\n\nThe kiln cracks the shelf.\n", encoding="utf-8")
    (docs / "example.yaml").write_text("kiln: cold\n", encoding="utf-8")
    build_index([docs], new)
    d = diff_indexes(old, new)
    assert [(x["status"], x["path"], x["anchor"], x["included"]) for x in d["sections"]] == [
        ("changed", "errors.md", "errors", False), ("changed", "page.md", "errors", True),
        ("changed", "page.md", "example", True)]
    assert [x["path"] for x in d["documents"]] == ["errors.md"]  # page.md's bytes are the same
    text = CliRunner().invoke(cli, ["diff", str(old), str(new)]).stdout
    assert "sections whose included files changed\n  ~ page.md#errors   lines 3-6\n  ~ page.md#example  lines 7-9\n" in text
    markdown = CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "markdown"]).stdout
    assert "Sections whose included files changed (2)" in markdown
    # the YAML alone changing: no document changed, and still not "no changes"
    (docs / "example.yaml").write_text("kiln: warm\n", encoding="utf-8")
    newer = tmp_path / "newer.db"
    build_index([docs], newer)
    d = diff_indexes(new, newer)
    assert (d["documents"], [(x["anchor"], x["included"]) for x in d["sections"]]) == ([], [("example", True)])
    assert "no changes" not in CliRunner().invoke(cli, ["diff", str(new), str(newer), "--format", "markdown"]).stdout
