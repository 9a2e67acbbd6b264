"""mdfts.render: inert, bounded HTML of sections, and snippets with <mark>."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from mdfts.parse import render_html
from mdfts.render import (
    MAX_TABLE_CELLS,
    PAGE_CHARS,
    PREVIEW_CHARS,
    query_terms,
    render_section,
    snippet_html,
    table_cells,
)

# The table bomb of issue #16: 20 tables of 300 columns over 300 one-cell rows (36 KB).
TABLE = "|a" * 300 + "|\n" + "|-" * 300 + "|\n" + "x\n" * 300 + "\n"
TABLE_BOMB = "# T\n\n" + TABLE * 20


@pytest.mark.parametrize(
    ("markdown", "absent"),
    [
        ("[x](javascript:alert(1))", "href"),
        ("[x](JAVASCRIPT:alert(1))", "href"),
        ("[x](&#106;avascript:alert(1))", "href"),
        ("[x](java&#09;script:alert(1))", "href"),
        ("[x](%6Aavascript:alert(1))", "href"),
        ("[x](vbscript:msgbox(1))", "href"),
        ("[x](data:text/html;base64,PHNjcmlwdD4=)", "href"),
        ("![x](data:image/png;base64,iVBORw0KGgo=)", "<img"),
        ("![x](data:image/svg+xml;base64,PHN2Zz4=)", "<img"),
        ("[x](file:///etc/passwd)", "href"),
        ("<javascript:alert(1)>", "href"),
        ("<script>alert(1)</script>", "<script"),
        ('<img src=x onerror="alert(1)">', "<img"),
        ("<a href=\"javascript:alert(1)\">x</a>", "<a "),
        ('[x](y "t\\" onmouseover=\\"alert(1)")', '" onmouseover'),
    ],
)
def test_rendered_markdown_is_inert(markdown: str, absent: str) -> None:
    assert absent not in render_section(markdown)


def test_safe_links_and_images_stay() -> None:
    out = render_html("[a](https://e.com/x) [b](mailto:a@b.c) [c](../c.md#top) [d](#here) ![i](img/a.png)")
    assert out == ('<p><a href="https://e.com/x">a</a> <a href="mailto:a@b.c">b</a> <a href="../c.md#top">c</a> '
                   '<a href="#here">d</a> <img src="img/a.png" alt="i" /></p>\n')


def test_table_bomb_renders_small() -> None:
    # Today: 13 MB of HTML (1.8 million cells) from these 36 KB.
    assert table_cells(TABLE_BOMB) == 20 * 301 * 300 + 20 * 300  # rows x columns, plus delimiters
    out = render_section(TABLE_BOMB)
    assert len(out) < 2 * len(TABLE_BOMB)
    assert "<td>" not in out and "Tables in this section are too large to draw" in out


def test_ordinary_tables_still_render() -> None:
    table = "| a | b |\n|---|:-:|\n| 1 | 2 |\n"
    assert table_cells(table) == 6
    assert "<td>1</td>" in render_section(table)
    assert table_cells("a | b\n--|--\n1 | 2\n\n3 | 4\n") == 6  # ends at the blank line
    assert table_cells("x\n---\n") == 0  # a setext heading, not a table
    assert MAX_TABLE_CELLS >= 10_000  # a big real table (100 rows x 100 columns) still draws


@pytest.mark.parametrize("unit", ["[a](", "![", "*a ", "`a ``b "], ids=["link-open", "image-open", "stars", "ticks"])
def test_long_sections_render_only_their_first_part(unit: str) -> None:
    # Today a 1 MB `[a](` section is rendered whole: 5.7 s per view.
    body = "# Big\n\n" + unit * (1_000_000 // len(unit))
    page = render_section(body)
    preview = render_section(body, PREVIEW_CHARS)
    assert f"Shown: the first {PAGE_CHARS:,} of {len(body):,} characters." in page
    assert len(page) < 3 * PAGE_CHARS
    assert len(preview) < 3 * PREVIEW_CHARS


def test_a_long_link_target_used_many_times_is_placed_once_and_not_drawn() -> None:
    # One reference definition and 5,500 `[a]`: each use carries the whole target, 2,000 emoji
    # (24 KB once percent-encoded). Each use was placed by rewrite_link (a Datasette section page
    # took 6 s) and drawn (144 MB of HTML, thrown away for being 8x its markdown).
    body = "# T\n\n[a]: x.md#" + "\U0001f600" * 2000 + "\n\n" + "[a]" * 5500 + "\n"
    placed: list[str] = []

    def rewrite(href: str) -> str:
        placed.append(href)
        return "/docs/section?anchor=" + href

    tracemalloc.start()
    try:
        out = render_section(body, rewrite_link=rewrite)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(placed) == 1
    assert out.startswith("<pre># T\n\n[a]: x.md#") and len(out) < 2 * len(body)
    assert peak < 20_000_000  # (it was 201 MB: the HTML and its pieces, a placed target per use)
    # An ordinary page is drawn as before.
    assert render_section("[a]\n\n[a]: x.md#b\n", rewrite_link=rewrite) == '<p><a href="/docs/section?anchor=x.md#b">a</a></p>\n'


def test_a_cut_ends_at_a_line_end() -> None:
    body = "# H\n\n" + "".join(f"line {i}\n\n" for i in range(20_000))
    out = render_section(body, 1000)
    assert out.endswith("<p>line 109</p>\n"
                        '<p class="mdfts-note mdfts-cut">Shown: the first 994 of 228,895 characters.</p>')


def test_query_terms() -> None:
    assert query_terms('how do I roll back "PAYMENTS_DB_URL"? a') == ["roll", "back", "payments_db_url"]
    assert query_terms("") == []


def test_snippet_marks_query_words_after_escaping() -> None:
    body = "# Rollback\n\nRoll back with `deployctl <rollback>` & check PAYMENTS_DB_URL.\n"
    assert snippet_html(body, "roll back payments_db_url") == (
        "<mark>Roll</mark> <mark>back</mark> with deployctl &lt;<mark>rollback</mark>&gt; &amp; check "
        "<mark>PAYMENTS_DB_URL</mark>.")


def test_snippet_has_no_markdown_noise() -> None:
    body = ("# Setup\n\nSee [the guide](https://x/y) first.\n\n```bash title=x\nexport A=1\n```\n\n"
            "| flag | meaning |\n|------|---------|\n| `--force` | **skip** checks |\n")
    assert snippet_html(body, "force") == (
        "See the guide first. export A=1 flag meaning <mark>--force</mark> skip checks")


def test_snippet_shows_docs_site_markup_as_a_reader_sees_it() -> None:
    # An admonition's, a tab's or a container's line shows its title, a line of shortcodes nothing;
    # an autolink its address.
    body = ('# Kiln\n\n!!! warning "Unplug it"\n    Wash the kiln.\n\n=== "Gas"\n    Open the damper.\n\n'
            ":::tip\nCool slowly, see <https://example.com/kiln>.\n:::\n\n{{< figure src=\"kiln.png\" >}}\n")
    assert snippet_html(body, "kiln") == (
        "Unplug it Wash the <mark>kiln</mark>. Gas Open the damper. Tip Cool slowly, see https://example.com/kiln.")


def test_snippet_picks_the_window_with_most_terms() -> None:
    body = "# H\n\n" + "alpha " * 50 + "beta gamma alpha " + "filler " * 50
    out = snippet_html(body, "alpha beta gamma", words=6)
    assert "<mark>beta</mark> <mark>gamma</mark>" in out
    assert out.startswith("… ") and out.endswith(" …")


def test_snippet_of_a_huge_section_is_bounded() -> None:
    body = "# H\n\n" + "needle " * 300_000
    out = snippet_html(body, "needle")
    assert out.count("<mark>needle</mark>") == 32 and out.endswith(" …")


def test_snippet_cuts_long_words() -> None:
    out = snippet_html("# H\n\nneedle " + "![" * 20_000 + " end\n", "needle")
    assert out == "<mark>needle</mark> " + "![" * 30 + "… end"


def test_linkless_inline_parsing_changes_no_output() -> None:
    # render_html() skips markdown-it's link and image rules where none can close; on every
    # fixture and sample doc (and on links of each kind) the HTML is what the full rules give.
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    from mdfts.parse import _safe_link, docs_site_markup

    full = MarkdownIt("commonmark", {"html": False}).use(front_matter_plugin).use(docs_site_markup).enable("table")
    full.validateLink = _safe_link  # type: ignore[method-assign]
    repo = Path(__file__).resolve().parent.parent
    texts = [p.read_text(encoding="utf-8", errors="replace")
             for p in sorted([*repo.glob("sample/docs/**/*.md"), *repo.glob("tests/fixtures/**/*.md")])]
    texts += ["[a] [b](c) ![d](e) [f][g] [h]\n\n[g]: /g\n[h]: /h", "x [y] z", "a ](b) [c", "[a](b", "![a]"]
    assert len(texts) > 30
    for text in texts:
        assert render_html(text) == full.render(text)
