"""Text output is inert: document content cannot drive a terminal or a pull-request comment (#16)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mdfts.build import build_index
from mdfts.cli import cli
from mdfts.output import build_summary, hits_text, inert
from mdfts.records import Hit

OSC52 = "\x1b]52;c;cm0gLXJmIH4=\x07"  # sets the clipboard to `rm -rf ~`
HOSTILE = (
    f"# Evil {OSC52}title \x1b[2J\x1b[31mred\x1b[0m\n\n"
    f"Roll back PAYMENTS_DB_URL now.\x1b]0;window title\x1b\\ \x9b31m8-bit\rover\x07\n\n"
    "## Twice \x1b[8mhidden\n\n## Twice \x1b[8mhidden\n\nSee [x](#no-such\x1b[5m-anchor).\n"
)
CONTROLS = ("\x1b", "\x07", "\x9b", "\r", "\x9d")


@pytest.fixture
def hostile_db(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "evil.md").write_text(HOSTILE, encoding="utf-8")
    out = tmp_path / "evil.db"
    build_index([docs], out)
    return docs, out


@pytest.mark.parametrize(
    "args",
    [
        ["search", "{db}", "payments"],
        ["search", "{db}", "payments", "--explain"],
        ["show", "{db}", "1"],
        ["show", "{db}", "evil.md"],
        ["token", "{db}", "PAYMENTS_DB_URL"],
        ["context", "{db}", "payments", "--format", "markdown"],
        ["context", "{db}", "payments"],
        ["check", "{docs}"],
        ["check", "{docs}", "--format", "github"],
    ],
    ids=["search", "search-explain", "show", "outline", "token", "context-markdown", "context-xml",
         "check", "check-github"],
)
def test_text_output_carries_no_control_sequence(hostile_db: tuple[Path, Path], args: list[str]) -> None:
    # ESC sequences from docs reached the terminal raw, OSC 52 (clipboard) included.
    docs, db = hostile_db
    result = CliRunner().invoke(cli, [a.format(db=db, docs=docs) for a in args])
    assert result.stdout, result.output
    assert not [c for c in CONTROLS if c in result.stdout], repr(result.stdout)
    assert any(word in result.stdout for word in ("Evil", "Twice", "PAYMENTS"))


def test_json_output_keeps_content_escaped(hostile_db: tuple[Path, Path]) -> None:
    _, db = hostile_db
    out = CliRunner().invoke(cli, ["search", str(db), "payments", "--json"]).stdout
    assert "\\u001b]52" in out and "\x1b" not in out  # JSON escapes C0 controls itself


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text\n\twith a tab", "plain text\n\twith a tab"),
        (f"a{OSC52}b", "ab"),
        ("a\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\b", "alinkb"),
        ("\x1b[1;31mbold red\x1b[0m", "bold red"),
        ("\x1bPdcs payload\x1b\\after", "after"),
        ("\x9b2J\x9d0;t\x9cok", "ok"),
        ("line\roverwritten\r\nnext", "lineoverwritten\nnext"),
        ("bell\x07 del\x7f nul\x00 esc-c\x1bc", "bell del nul esc-c"),
        ("unterminated \x1b]52;c;AAAA", "unterminated "),
        ("é ✓ 中文", "é ✓ 中文"),
    ],
    ids=["plain", "osc52", "osc8-hyperlink", "sgr", "dcs", "c1", "cr", "c0", "unterminated", "unicode"],
)
def test_inert(text: str, expected: str) -> None:
    assert inert(text) == expected


def test_diff_markdown_escapes_html_links_and_mentions(tmp_path: Path) -> None:
    # Headings turned into live HTML, links and mentions in a pull-request comment.
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nbody\n")
    old = tmp_path / "old.db"
    build_index([docs], old)
    (docs / "a.md").write_text(
        "# A\n\nbody\n\n## \\<img src=x onerror=alert(1)\\>\n\n## \\[Approve\\]\\(https://evil\\)\n\n"
        "## ping @user and @org/team\n\n## \\</details\\> **bold** https://evil.example\n")
    new = tmp_path / "new.db"
    build_index([docs], new)
    md = CliRunner().invoke(cli, ["diff", str(old), str(new), "--format", "markdown"]).stdout
    assert "<img" not in md and "&lt;img" in md
    assert md.count("</details>") == 1  # the comment's own
    headings = "\n".join(line.split(" | ")[2] for line in md.splitlines() if line.startswith("| added | `a.md#"))
    assert "[Approve](" not in headings and "\\[Approve\\]\\(" in headings
    assert "@user" not in headings and "@org" not in headings and "@\u200buser" in headings
    assert "://" not in headings  # GitHub autolinks bare URLs
    assert all(line.count("`") in (0, 2, 4, 6) for line in md.splitlines())  # tokens stay in code spans


def test_the_build_summary_counts_in_words() -> None:
    # One file is "1 document", not "1 documents"; thousands are grouped as bytes are.
    base = {"output": "a.db", "bytes": 1036288, "seconds": 0.5, "skipped": [], "reused": 0}
    assert build_summary({**base, "documents": 1, "sections": 1, "tokens": 4453}) == (
        "a.db: 1 document, 1 section, 4,453 exact tokens, 1,036,288 bytes in 0.50s")
    assert build_summary({**base, "documents": 2, "sections": 0, "tokens": 1}).startswith(
        "a.db: 2 documents, 0 sections, 1 exact token, ")


def test_a_hit_without_a_score_is_printed() -> None:
    # An index's search.sql may give a hit no score, or a signal no share (NULL): this one does
    # when the query's word is in the headings of 20,000 sections (5,000 is fine), and `mdfts
    # search`, with or without --explain, stopped there with a TypeError traceback.
    why = {"score": None, "signals": {"bm25": {"value": 1.0, "weight": 2.0, "points": 2.0, "share": None},
                                      "cover": {"value": None, "weight": 1.5, "points": None, "share": None}},
           "terms": [{"term": "rollback", "idf": 0.0, "identifier": False, "match": "exact"}]}
    hit = Hit(id=7, ref="h.md#rollback-1", path="h.md", heading="rollback 1", trail=("rollback 1",),
              anchor="rollback-1", level=1, start_line=5, end_line=8, body="# rollback 1\n", score=None,
              snippet="text 1", rank=1, explain=why)
    assert hits_text([hit, hit.with_(rank=2, score=2.5)], explain=True) == (
        " 1. h.md:5-8  rollback 1  [?]\n    text 1\n    why: bm25 +2.000 (?; 1.00 x 2)\n    terms: rollback=exact\n"
        " 2. h.md:5-8  rollback 1  [2.500]\n    text 1\n    why: bm25 +2.000 (?; 1.00 x 2)\n    terms: rollback=exact")
