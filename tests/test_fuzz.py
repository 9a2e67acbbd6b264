"""Property tests with hypothesis: the section splitter, the exact-token extractor, every shipped query.

MDFTS_FUZZ_EXAMPLES sets the examples per property (default 200, a few seconds in all); the long
run for the issue was `MDFTS_FUZZ_EXAMPLES=100000 pytest tests/test_fuzz.py`.
"""

from __future__ import annotations

import itertools
import os
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from markdown_it import MarkdownIt
from test_parse import markdown_it_blocks

from mdfts.build import build_index
from mdfts.errors import QueryError
from mdfts.index import connect
from mdfts.parse import _split_at_runs, docs_site_markup, parse_blocks, split_code_spans
from mdfts.queries import clean_text, package_queries, run_query
from mdfts.sections import split_lines, split_sections
from mdfts.tokens import extract_tokens, normalize

# Hundreds of examples per property: seconds in all, so `make quick` leaves the file out.
pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("MDFTS_FUZZ_EXAMPLES", "200"))
fuzz = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Lines that exercise markdown's block structure, mixed with arbitrary text.
BLOCK_LINES = [
    "# Title", "## Sub `code`", "###### six", "####### seven", "#", "#no space", "Setext", "===", "---",
    "- item", "  - nested", "1. first", "> quote", "> # quoted heading", "```", "```sh", "~~~", "    indented",
    "<div>", "</div>", "<!-- c", "-->", "<!-- a --> b <!-- c -->", "| a | b |", "|---|---|", "[ref]: /url", "", " ",
    "\t", "text PAYMENTS_DB_URL",
    "--force-with-lease E1027 v1.2.3", "*", "***", "\\# escaped", "# [link](x) ![i](y) <b>t</b>", "- # heading in list",
    "+ plus", "2) paren", "2024 a year", "#tag", "<nota tag", "[not a ref", "  lazy", "___", "|:--|--:|", "> > deep",
    "      six spaces", "---\nx: 1", "~~~~", "* * *", "+++", "+++\nx = 1",
    # what docs site generators add (mdfts.parse.docs_site_markup)
    "!!! note", '??? tip "Title"', "!!! Stop !!!", '=== "Tab"', ":::note", ":::tip[Title]", ":::", "::::",
    "{{< figure >}}", "{{% notice %}}", "{{< a >}} b", "{{< open", "    !!! note", "        deeper",
]
line = st.one_of(st.sampled_from(BLOCK_LINES), st.text(max_size=30))
EOLS = st.sampled_from(["\n", "\r\n", "\r"])
markdown = st.builds(
    lambda ls, eol, last: eol.join(ls) + (eol if last else ""),
    st.lists(line, max_size=25), EOLS, st.booleans(),
).filter(lambda t: not t.startswith(("---", "+++")))  # front matter has its own property


def _with_front_matter(toml: bool, keys: list[str], body: str) -> str:
    """YAML between --- lines, or TOML between +++ lines (as Hugo writes it), then `body`."""
    if toml:
        return "+++\n" + "".join(f"{k} = 1\n" for k in keys) + "+++\n" + body
    return "---\n" + "".join(f"{k}: v\n" for k in keys) + "---\n" + body


front_matter = st.builds(
    _with_front_matter,
    st.booleans(), st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True), unique=True, max_size=4), markdown,
)


def _first_content_line(lines: list[str], start: int) -> int:
    """0-based index of the first line from `start` that is not blank (CommonMark: spaces and tabs)."""
    while start < len(lines) and not lines[start].strip(" \t"):
        start += 1
    return start


def _is_cut_from(body_line: str, line: str) -> bool:
    """`body_line` is `line`, or `line` less some runs of characters (the parts of HTML comments
    on that line): its characters in order."""
    rest = iter(line)
    return all(c in rest for c in body_line)


def _check_tiling(text: str, body_start: int) -> None:
    """Sections tile the file: the first starts at the first non-blank line after the front
    matter, each next one on the line after the previous ends, the last ends on the last line;
    a section's body is exactly its lines. No lines lost, none counted twice. HTML comments are
    the exception: a comment's text is cut from a body (its lines kept); and comments, rules and
    lines of shortcodes alone before the first heading make no lead section."""
    doc = split_sections("t.md", text)
    lines = split_lines(text)
    first = _first_content_line(lines, body_start)
    secs = doc.sections
    # (the lines of rules and shortcodes, 0-based)
    unread = {i for t in parse_blocks("\n".join(lines)) if t.type in ("hr", "shortcode") and t.map
              for i in range(*t.map)}
    if first == len(lines) or (not secs and "<!--" not in text):
        assert secs == () and all(i in unread or not lines[i].strip(" \t") for i in range(first, len(lines)))
        return
    if "<!--" not in text and not unread:
        assert secs[0].start_line == first + 1
    elif not secs or secs[0].start_line != first + 1:
        skipped = range(first, secs[0].start_line - 1 if secs else len(lines))
        assert "<!--" in "\n".join(lines[i] for i in skipped if i not in unread) or all(
            i in unread or not lines[i].strip(" \t") for i in skipped)
    for a, b in itertools.pairwise(secs):
        assert b.start_line == a.end_line + 1
    if secs:
        assert secs[-1].end_line == len(lines)
    for s in secs:
        assert s.start_line <= s.end_line
        own = lines[s.start_line - 1 : s.end_line]
        if "<!--" not in text:
            assert s.body == "\n".join(own)
            continue
        body_lines = s.body.split("\n")
        assert len(body_lines) == len(own)
        assert all(_is_cut_from(b, line) for b, line in zip(body_lines, own, strict=True))
    assert doc.lines == len(lines)


_REFERENCE = MarkdownIt("commonmark").use(docs_site_markup).enable("table")


@fuzz
@given(markdown)
def test_sections_tile_the_file(text: str) -> None:
    _check_tiling(text, 0)


@fuzz
@given(front_matter)
def test_sections_start_after_front_matter(text: str) -> None:
    fm_lines = text.split(text[:4], 2)[1].count("\n") + 2
    _check_tiling(text, fm_lines)


@fuzz
@given(markdown)
def test_every_heading_starts_a_section(text: str) -> None:
    norm = text.replace("\r\n", "\n").replace("\r", "\n")
    heading_lines = {t.map[0] + 1 for t in _REFERENCE.parse(norm) if t.type == "heading_open" and t.map}
    doc = split_sections("t.md", text)
    assert {s.start_line for s in doc.sections if s.level} == heading_lines


@fuzz
@given(st.one_of(markdown, front_matter, st.text()))
def test_streamed_blocks_are_markdown_its_blocks(text: str) -> None:
    # The stream parser leaves out the rules a line cannot start (mdfts.parse._dispatcher): the
    # tokens must be markdown-it's own, every rule tried.
    assert [t.as_dict() for t in parse_blocks(text)] == markdown_it_blocks(text)


@fuzz
@given(st.text(alphabet="` ab\n", max_size=40))
def test_code_spans_split_as_backtick_runs_pair(raw: str) -> None:
    expected = _split_at_runs(raw) if "`" in raw else (raw, [])
    assert split_code_spans(raw) == expected


@fuzz
@given(st.one_of(markdown, front_matter, st.text()))
def test_same_input_same_output(text: str) -> None:
    try:
        first = split_sections("t.md", text)
    except Exception as err:  # front matter that is not YAML: the same error both times
        with pytest.raises(type(err), match=None):
            split_sections("t.md", text)
        return
    assert split_sections("t.md", text) == first


@fuzz
@given(st.text(), st.sampled_from(["heading", "code", "fence", "text"]))
def test_tokens_are_substrings_and_normalize_is_idempotent(text: str, source: str) -> None:
    tokens = extract_tokens([(source, text)])
    for t in tokens:
        assert t.token and t.token in text
        assert normalize(t.norm) == t.norm
    assert tokens == extract_tokens([(source, text)])


@fuzz
@given(st.text())
def test_normalize_is_idempotent(text: str) -> None:
    assert normalize(normalize(text)) == normalize(text)


# -- every shipped query, any parameter values --------------------------------------------------

@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    docs = tmp_path_factory.mktemp("docs")
    (docs / "pay.md").write_text(
        "# Payments\n\nRoll back with `PAYMENTS_DB_URL`.\n\n## Rollback\n\nRun `deploy --force-with-lease`, "
        "then check E1027 and v1.2.3.\n"
    )
    (docs / "caf\u00e9.md").write_text("# Caf\u00e9 \u65e5\u672c\n\nOr, and, not NEAR(x) \"quoted\" * ^ -\n")
    out = tmp_path_factory.mktemp("out") / "index.db"
    build_index([docs], out)
    db = connect(out)
    db.execute("pragma query_only = 1")
    return db


QUERIES = package_queries()
text = st.one_of(
    st.text().map(clean_text),  # the CLI cleans lone surrogates; everything else reaches SQL
    st.sampled_from(["", " ", '"', "'", "*", "OR", "NEAR(", "pay*", "-x", "a:b", "%", "_", "[", "\\", "\0"]),
)
anything = st.one_of(
    st.none(), text, st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(), st.binary(max_size=20)
)
NUMERIC = {"limit", "id"}


@pytest.mark.parametrize("query", QUERIES, ids=[q.name for q in QUERIES])
def test_every_query_takes_any_text(index: sqlite3.Connection, query) -> None:  # type: ignore[no-untyped-def]
    """Any text in a text parameter, numbers left unset: rows, never an error."""
    @fuzz
    @given(st.fixed_dictionaries({p: st.none() if p in NUMERIC else text for p in query.params}))
    def run(params: dict[str, object]) -> None:
        run_query(index, query, params)

    run()


@pytest.mark.parametrize("query", QUERIES, ids=[q.name for q in QUERIES])
def test_every_query_fails_cleanly_on_any_value(index: sqlite3.Connection, query) -> None:  # type: ignore[no-untyped-def]
    """Any value anywhere (`--param limit=ten`): rows, or a QueryError the CLI prints as one line."""
    @fuzz
    @given(st.fixed_dictionaries({p: anything for p in query.params}))
    def run(params: dict[str, object]) -> None:
        try:
            run_query(index, query, params)
        except QueryError as err:
            assert "\n" not in str(err)

    run()
