"""The block parse the build streams: the same tokens as markdown-it's own block parser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from mdfts.parse import Token, _block_parser_config, _split_at_runs, parse_blocks, split_code_spans

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def folded(tokens: list[Token]) -> list[Token]:
    """markdown-it's tokens with each table row's cells folded into its tr_open token, as
    stream_blocks() hands rows on: meta["cells"] = [(column, content)] of the non-empty cells."""
    out: list[Token] = []
    row: Token | None = None
    column, content = 0, ""
    for tok in tokens:
        if row is not None:
            if tok.type in ("td_open", "th_open"):
                content = ""
                continue
            if tok.type == "inline":
                content = tok.content
                continue
            if tok.type in ("td_close", "th_close"):
                if content:
                    row.meta["cells"].append((column, content))
                column += 1
                continue
            if tok.type == "tr_close":
                row = None
        out.append(tok)
        if tok.type == "tr_open":
            row, column = tok, 0
            tok.meta["cells"] = []
    return out


def markdown_it_blocks(text: str) -> list[dict[str, Any]]:
    return [t.as_dict() for t in folded(_block_parser_config().parse(text))]


def test_block_tokens_are_made_the_fast_way_with_this_markdown_it() -> None:
    # _StreamState.push makes tokens itself while Token has the fields it knows; the tests
    # below compare those tokens with markdown-it's own
    from mdfts.parse import _FAST_TOKENS

    assert _FAST_TOKENS


def test_every_block_rule_gives_markdown_its_tokens() -> None:
    # Each rule, and each rule ending a paragraph, a list item or a quote; lines that start like a
    # rule's marker and are not one (#hashtag, -not, 2024, <notatag, [not a ref).
    text = (FIXTURES / "parse" / "every_block.md").read_text(encoding="utf-8")
    tokens = parse_blocks(text)
    assert {t.type for t in tokens} >= {
        "front_matter", "heading_open", "fence", "blockquote_open", "hr", "bullet_list_open",
        "ordered_list_open", "html_block", "table_open", "tr_open", "code_block", "paragraph_open",
        "admonition_open", "tabbed_open", "container_directive_open", "shortcode",
    }
    assert [t.as_dict() for t in tokens] == markdown_it_blocks(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "x",
        "    code on the first line",
        "---\nnot: closed",
        "| a |\n|---|",
        "a\n|---|",
        "> q\n    > code in a quote?\n",
        "- a\n\n      code\n- b\n",
        "1.\n2.\n",
        "text\n  # heading after indent\n",
        "\t- tab indented item\n\t\tcontinued",
        "| a \\| b | `c \\| d` |\n|---|---|\n| x \\\\| y | z\\| |\n| \\|\\| | |\n",
        "!!! note\n    a\n\n\n    b",
        "- x\n\n    !!! tip \"T\"\n        a\n    b",
        '??? "Why?"\n    a\n\n!!! "No type"\n    b\n',
        '=== "A"\n    a\n=== "B"\n\n    b\n',
        ":::: outer\n::: inner\na\n:::\n::::\n",
        ":::note\nnever closed\n# heading",
        "{{< a\n\nb >}}",
        "> {{< a\n> b >}}\nc",
    ],
    ids=["empty", "one-char", "code-first-line", "unclosed-front-matter", "table-at-end", "delimiter-only",
         "quote-then-code", "list-with-code", "empty-items", "indented-heading", "tabs", "escaped-pipes",
         "admonition-two-blank-lines", "admonition-in-a-list", "details-without-a-type", "two-tabs", "nested-containers", "unclosed-container",
         "shortcode-over-a-blank-line", "shortcode-in-a-quote"],
)
def test_edge_cases_give_markdown_its_tokens(text: str) -> None:
    assert [t.as_dict() for t in parse_blocks(text)] == markdown_it_blocks(text)


@pytest.mark.parametrize(
    "raw",
    ["a `b` c", "`x`", "`", "a ` b", "`a` `b` `c", "` spaced `", "`  `", "`` `x` ``", "x``y", "`a``b`c`", "no code"],
)
def test_code_spans_of_single_backticks_pair_in_order(raw: str) -> None:
    # split_code_spans() pairs single backticks without matching runs; the run matcher is the rule.
    expected = _split_at_runs(raw) if "`" in raw else (raw, [])
    assert split_code_spans(raw) == expected


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="|\\a `", max_size=16))
def test_the_table_rules_split_is_markdown_its_escaped_split(row: str) -> None:
    from markdown_it.rules_block.table import escapedSplit, table

    from mdfts.parse import _with_fast_split

    fast = _with_fast_split(table)
    assert fast is not table and table.__globals__["escapedSplit"] is escapedSplit  # the library's own is kept
    assert fast.__globals__["escapedSplit"](row) == escapedSplit(row)  # type: ignore[attr-defined]


def test_inline_comments_are_found_as_markdown_it_reads_them() -> None:
    """inline_comment_spans finds the comments markdown-it's inline rules make html_inline tokens
    of, on 5,000 random strings of the pieces that decide it (code spans, `-->` and its near
    misses, escapes of `<`, links), without markdown-it's inline parse, which a build skips."""
    import random

    from mdfts.parse import _inline_parser, inline_comment_spans

    md = _inline_parser()
    pieces = ["<!--", "-->", "--->", "`", "``", "\\<", "a", " ", "-", ">", "<", "[x](y)", "*", "\n"]
    rng = random.Random(42)
    for _ in range(5000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 14)))
        found = [text[a:b] for a, b in inline_comment_spans(text)]
        tokens = [c.content for tok in md.parseInline(text) for c in tok.children or ()
                  if c.type == "html_inline" and c.content.startswith("<!--")]
        assert found == tokens, text
