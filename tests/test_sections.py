"""split_sections: one section per heading (plus lead text), with exact lines, anchors and trails."""

from __future__ import annotations

import datetime
import itertools
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from mdfts.discover import decode
from mdfts.errors import SourceError
from mdfts.parse import docs_site_markup
from mdfts.sections import Document, split_lines, split_sections

from conftest import FIXTURE_DOCS, SAMPLE_DOCS, fixture_text


def _doc(name: str) -> Document:
    return split_sections(name, fixture_text(name))


def _outline(doc: Document) -> list[tuple[int, str, str, int, int]]:
    return [(s.level, s.heading, s.anchor, s.start_line, s.end_line) for s in doc.sections]


# (fixture, [(level, heading, anchor, start_line, end_line), ...])
OUTLINES = [
    ("hash_in_fence.md", [(1, "Fences", "fences", 1, 13), (2, "After the code", "after-the-code", 14, 14)]),
    ("html_block.md", [(1, "Html", "html", 1, 6), (2, "After the HTML", "after-the-html", 7, 7)]),
    ("setext.md", [
        (1, "Setext title", "setext-title", 1, 5),
        # GitHub drops the line break from the anchor (github-slugger: whitespace other than a space)
        (2, "A heading that runs over two lines", "a-heading-that-runsover-two-lines", 6, 10),
    ]),
    ("atx_closing.md", [
        (1, "Closed title", "closed-title", 1, 2),
        (2, "Closed sub", "closed-sub", 3, 4),
        (3, "Not closed #hash", "not-closed-hash", 5, 5),
    ]),
    ("front_matter.md", [
        (0, "", "", 6, 7),
        (1, "Heading one", "heading-one", 8, 9),
        (2, "Heading two", "heading-two", 10, 10),
    ]),
    ("no_headings.md", [(0, "", "", 1, 3)]),
    ("lead_text.md", [(0, "", "", 2, 3), (1, "First heading", "first-heading", 4, 6)]),
    ("duplicate_headings.md", [
        (1, "Errors", "errors", 1, 2),
        (2, "Errors", "errors-1", 3, 4),
        (2, "Errors-1", "errors-1-1", 5, 5),
    ]),
    ("heading_markup.md", [
        (1, "Set PAYMENTS_DB_URL in the vault now", "set-payments_db_url-in-the-vault-now", 1, 2),
        (2, "Strong and emphasis with code", "strong-and-emphasis-with-code", 3, 3),
    ]),
    ("crlf.md", [(1, "Windows", "windows", 1, 4), (2, "Second", "second", 5, 6)]),
    ("lone_cr.md", [(1, "Old Mac", "old-mac", 1, 4), (2, "Second", "second", 5, 6)]),
    ("fence_in_list.md", [(1, "List", "list", 1, 11), (2, "Next", "next", 12, 12)]),
    ("unclosed_fence.md", [(1, "Before", "before", 1, 6)]),
    ("nesting.md", [
        (1, "Top", "top", 1, 2),
        (2, "Child a", "child-a", 3, 4),
        (3, "Grandchild", "grandchild", 5, 6),
        (2, "Child b", "child-b", 7, 8),
        (4, "Skipped a level", "skipped-a-level", 9, 9),
    ]),
]


@pytest.mark.parametrize(("name", "outline"), OUTLINES, ids=[n.removesuffix(".md") for n, _ in OUTLINES])
def test_outline(name: str, outline: list[tuple[int, str, str, int, int]]) -> None:
    assert _outline(_doc(name)) == outline


def test_bom_is_dropped_by_decode_and_by_split_sections() -> None:
    data = (FIXTURE_DOCS / "bom.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    expected = [(1, "With a BOM", "with-a-bom", 1, 3)]
    assert _outline(split_sections("bom.md", decode("bom.md", data))) == expected
    assert _outline(split_sections("bom.md", data.decode("utf-8"))) == expected  # BOM still in the text


@pytest.mark.parametrize(
    ("name", "title"),
    [
        ("front_matter.md", "Front matter title"),  # front matter wins over the first h1
        ("nesting.md", "Top"),                     # else the first h1
        ("setext.md", "Setext title"),             # a setext h1 counts
        ("no_headings.md", "no_headings"),         # else the file name without its extension
        ("atx_closing.md", "Closed title"),
    ],
    ids=["front-matter", "first-h1", "setext-h1", "file-name", "closing-hashes"],
)
def test_title_precedence(name: str, title: str) -> None:
    assert _doc(name).title == title


def test_front_matter_is_kept_as_json() -> None:
    doc = _doc("front_matter.md")
    assert doc.front_matter == {"title": "Front matter title", "owner": "team-a"}
    assert doc.front_matter_json == '{"owner": "team-a", "title": "Front matter title"}'
    assert _doc("nesting.md").front_matter_json == "{}"


def test_toml_front_matter_is_read_like_yaml() -> None:
    """Hugo writes front matter in TOML between `+++` lines: its title names the document, its data
    is kept as JSON, and neither its lines nor its `#` comments are text or headings."""
    text = ('+++\ntitle = "Kiln firing"\n# a TOML comment, no heading\nweight = 10\n'
            'date = 2024-01-02\n[params]\ncones = [6, 10]\n+++\n\nLoad the kiln.\n\n## Cone chart\n\nCone 6.\n')
    doc = split_sections("kiln.md", text)
    assert doc.title == "Kiln firing"
    assert doc.front_matter == {"title": "Kiln firing", "weight": 10, "date": datetime.date(2024, 1, 2),
                                "params": {"cones": [6, 10]}}
    assert '"date": "2024-01-02"' in doc.front_matter_json
    assert [(s.start_line, s.heading) for s in doc.sections] == [(10, ""), (12, "Cone chart")]
    assert "+++" not in doc.sections[0].text and "weight" not in doc.sections[0].text


def test_unclosed_toml_front_matter_is_text() -> None:
    """Without its closing `+++` line, a first line `+++` opens no front matter: it is text."""
    doc = split_sections("plus.md", "+++\ntitle = \"Kiln\"\n\n# Kiln\n")
    assert (doc.front_matter, doc.title) == ({}, "Kiln")
    assert "+++" in doc.sections[0].text


def test_plus_lines_in_a_quote_are_text() -> None:
    """Front matter opens the file itself: `+++` lines in a block quote on its first line are
    quoted text (their words were hidden in a front_matter token and never indexed), as `---`
    lines there are."""
    doc = split_sections("quote.md", "> +++\n> kiln = 1\n> +++\n\n# Kiln\n")
    assert (doc.front_matter, doc.title) == ({}, "Kiln")
    assert "kiln = 1" in doc.sections[0].text


def test_trail_parent_and_level() -> None:
    doc = _doc("nesting.md")
    got = [(s.ordinal, s.level, s.trail, s.parent) for s in doc.sections]
    assert got == [
        (0, 1, ("Top",), None),
        (1, 2, ("Top", "Child a"), 0),
        (2, 3, ("Top", "Child a", "Grandchild"), 1),
        (3, 2, ("Top", "Child b"), 0),
        (4, 4, ("Top", "Child b", "Skipped a level"), 3),
    ]


def test_lead_section_has_no_heading_trail_or_parent() -> None:
    lead = _doc("lead_text.md").sections[0]
    assert (lead.level, lead.heading, lead.trail, lead.anchor, lead.parent) == (0, "", (), "", None)
    assert lead.body == "Lead paragraph before any heading.\n"


@pytest.mark.parametrize(
    "name",
    ["hash_in_fence.md", "setext.md", "front_matter.md", "crlf.md", "lone_cr.md", "fence_in_list.md", "nesting.md"],
)
def test_body_is_the_lines_of_the_section(name: str) -> None:
    text = fixture_text(name)
    lines = split_lines(text)
    doc = split_sections(name, text)
    assert doc.lines == len(lines)
    for s in doc.sections:
        assert s.body == "\n".join(lines[s.start_line - 1 : s.end_line])
    # Sections tile the file from the first section to the end, without gaps or overlaps.
    for a, b in itertools.pairwise(doc.sections):
        assert a.end_line + 1 == b.start_line
    assert doc.sections[-1].end_line == len(lines)


@pytest.mark.parametrize(
    ("name", "heading_line", "body"),
    [
        ("crlf.md", 1, "# Windows\n\nLine two.\n"),
        ("lone_cr.md", 1, "# Old Mac\n\nLine two.\n"),
        ("setext.md", 6, "A heading that runs\nover two lines\n--------------\n\nBody."),
        ("unclosed_fence.md", 1, "# Before\n\n```\n# inside the fence\n\n## still inside, to the end of the file"),
    ],
    ids=["crlf", "lone-cr", "setext-multi-line", "unclosed-fence"],
)
def test_body_exact(name: str, heading_line: int, body: str) -> None:
    [section] = [s for s in _doc(name).sections if s.start_line == heading_line]
    assert section.body == body


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("hash_in_fence.md", "# not a heading: a shell comment"),
        ("hash_in_fence.md", "# indented code, not a heading"),
        ("fence_in_list.md", "# a comment in a fenced block inside a list item"),
    ],
    ids=["fence", "indented-code", "fence-in-list"],
)
def test_code_comments_stay_in_the_text(name: str, needle: str) -> None:
    assert needle in _doc(name).sections[0].text


def test_heading_text_drops_markup_but_keeps_code_tokens() -> None:
    first = _doc("heading_markup.md").sections[0]
    assert first.text.splitlines()[0] == "Set PAYMENTS_DB_URL in the vault now"
    assert ("PAYMENTS_DB_URL", "env_var", "heading") in {(t.token, t.kind, t.source) for t in first.tokens}


@pytest.mark.parametrize(
    ("text", "line", "what"),
    [
        ("---\ntitle: [\n---\n# ok\n", 2, "front matter is not valid YAML"),
        ("---\n- a list\n---\n# ok\n", 2, "front matter is not a mapping (it is a list)"),
        ('+++\ntitle = "ok"\nweight = = 1\n+++\n# ok\n', 3, "front matter is not valid TOML"),
        ("---\n42\n---\n# ok\n", 2, "front matter is not a mapping (it is an int)"),
    ],
    ids=["bad-yaml", "not-a-mapping", "bad-toml", "an-int"],
)
def test_bad_front_matter_names_file_and_line(text: str, line: int, what: str) -> None:
    with pytest.raises(SourceError) as err:
        split_sections("bad.md", text)
    assert str(err.value) == f"bad.md:{line}: {what}"


COMMENTED = """<!-- markdownlint-disable MD013 -->
# Kiln

Fire at cone six.
<!-- Old step, kept for the record:
set GLAZE_OVEN_URL first -->

```html
<!-- a comment in code is code -->
```

    <!-- so is one in indented code -->

> <!-- quoted
> note --> <b>Loaded</b> shelves

<!-->
Cool for a day.

<!-- never closed
PAYMENTS_DB_URL
"""


def test_html_comments_are_cut_from_the_body_their_lines_kept() -> None:
    """An HTML block's comment is left out of the body (a reader never sees it), its line breaks
    kept; a comment in code stays; what follows `-->` in the block stays; `<!-->` is a whole
    comment; one never closed runs to its block's end. Its words are no exact tokens."""
    doc = split_sections("kiln.md", COMMENTED)
    (kiln,) = doc.sections  # the comment before the heading makes no lead section
    lines = split_lines(COMMENTED)
    assert (kiln.start_line, kiln.end_line) == (2, len(lines))
    assert kiln.body.count("\n") == len(lines) - 2
    assert kiln.body == (
        "# Kiln\n\nFire at cone six.\n\n\n\n```html\n<!-- a comment in code is code -->\n```\n\n"
        "    <!-- so is one in indented code -->\n\n> \n>  <b>Loaded</b> shelves\n\n\nCool for a day.\n\n\n"
    )
    assert {t.token for t in kiln.tokens}.isdisjoint({"GLAZE_OVEN_URL", "PAYMENTS_DB_URL"})


@pytest.mark.parametrize(
    ("text", "outline"),
    [
        ("<!-- a -->\n\n<!-- b -->\n# T\n", [(1, 4, 4)]),
        ("<!-- a -->\nLead.\n# T\n", [(0, 2, 2), (1, 3, 3)]),
        ("<!-- a -->\n\n[ref]: /url\n\n# T\n", [(0, 3, 4), (1, 5, 5)]),
        ("<!-- a --> <div>Lead</div>\n# T\n", [(0, 1, 1), (1, 2, 2)]),
        ("<!-- only a comment -->\n", []),
        ("<!-- a --> <!-- b -->\n# T\n", [(1, 2, 2)]),
    ],
    ids=["comments-alone", "comment-then-lead", "comment-then-reference", "html-after-the-comment", "nothing-else",
         "two-comments-on-a-line"],
)
def test_comments_alone_make_no_lead_section(text: str, outline: list[tuple[int, int, int]]) -> None:
    assert [(s.level, s.start_line, s.end_line) for s in split_sections("t.md", text).sections] == outline


def test_every_comment_of_a_comment_block_is_cut() -> None:
    """A comment after the first one's `-->`, on the block's last line, is cut as well: closed or
    not, its words are neither body nor exact tokens; the text between them stays."""
    doc = split_sections("t.md", "# T\n<!-- a --> Kept <!-- GLAZE_OVEN_URL --> too\n<!-- b --> <!-- PAYMENTS_DB_URL\n")
    (t,) = doc.sections
    assert t.body == "# T\n Kept  too\n "
    assert t.tokens == ()


@pytest.mark.parametrize(
    ("block", "body", "tokens"),
    [
        ("Fire it <!-- GLAZE_OVEN_URL --> slowly; KILN_MAX holds.", "Fire it  slowly; KILN_MAX holds.", {"KILN_MAX"}),
        ("- a <!-- GLAZE_OVEN_URL\n  still --> KILN_MAX", "- a \n   KILN_MAX", {"KILN_MAX"}),
        ("> a <!--\n> GLAZE_OVEN_URL\n> --> KILN_MAX", "> a \n> \n>  KILN_MAX", {"KILN_MAX"}),
        ("Code `<!-- GLAZE_OVEN_URL -->` stays <!-- KILN_MAX -->", "Code `<!-- GLAZE_OVEN_URL -->` stays ",
         {"<!-- GLAZE_OVEN_URL -->", "GLAZE_OVEN_URL"}),
        ("Escaped \\<!-- GLAZE_OVEN_URL --> stays", "Escaped \\<!-- GLAZE_OVEN_URL --> stays", {"GLAZE_OVEN_URL"}),
        ("Never closed <!-- GLAZE_OVEN_URL", "Never closed <!-- GLAZE_OVEN_URL", {"GLAZE_OVEN_URL"}),
        ("Not one: <!--a---> KILN_MAX", "Not one: <!--a---> KILN_MAX", {"KILN_MAX"}),
    ],
    ids=["in-a-line", "over-list-lines", "over-quote-lines", "not-in-code", "escaped", "never-closed",
         "not-by-markdown-its-rule"],
)
def test_a_comment_inside_a_paragraph_is_cut(block: str, body: str, tokens: set[str]) -> None:
    """A comment in a paragraph's line is cut as an HTML block's is (a reader never sees it), its
    line breaks and its lines' fronts (`> `, an indent) kept; one that markdown-it reads as text -
    in a code span, escaped, never closed, or not of its pattern - stays, a token where it holds
    one."""
    (t,) = split_sections("t.md", f"# T\n\n{block}\n").sections
    assert t.body == f"# T\n\n{body}"
    assert {tok.token for tok in t.tokens} == tokens


@pytest.mark.parametrize(
    ("block", "body", "tokens"),
    [
        ("<div>\n<!-- GLAZE_OVEN_URL -->\nShown\n</div>", "<div>\n\nShown\n</div>", set()),
        ("> <div>\n> <!-- a\n> GLAZE_OVEN_URL --> KILN_MAX\n> </div>", "> <div>\n> \n>  KILN_MAX\n> </div>", {"KILN_MAX"}),
        ("<script>\nvar GLAZE_OVEN_URL = '<!-- text -->';\n</script>",
         "<script>\nvar GLAZE_OVEN_URL = '<!-- text -->';\n</script>", {"GLAZE_OVEN_URL"}),
        # markdown-it reads "\t x" as "   x" (the tab widened): the line's own space stays with the tab.
        ("- a\n\n\t<!--\n\t GLAZE_OVEN_URL\n\t-->", "- a\n\n\t\n\t \n\t", set()),
    ],
    ids=["in-a-div", "in-a-quoted-div", "in-a-script-it-is-text", "in-a-list-item-indented-by-a-tab"],
)
def test_a_comment_inside_an_html_block_is_cut(block: str, body: str, tokens: set[str]) -> None:
    """A comment inside any HTML block is cut as one that opens it is; in a <script>, <style> or
    <textarea> a `<!--` is the element's text, not a comment."""
    (h,) = split_sections("t.md", "# H\n\n" + block + "\n").sections
    assert h.body == "# H\n\n" + body
    assert {t.token for t in h.tokens} == tokens


QUOTED_COMMENTS = """# Kiln

> Fire slowly.
> <!-- TODO: ask
> about saggar wadding
>
> -->
> Then cool.

- Load the shelves

  <!--
    bisque kilnwash
  -->
  evenly.
"""


def test_a_comment_in_a_quote_or_a_list_item_keeps_each_line_s_markers(tmp_path: Path) -> None:
    """A comment's lines in a block quote or a list item lose the comment, not the container's
    `> ` or indent: the stored body still reads as the quote it was. The markers are no words, so
    what is searched and how it ranks is as if those lines had held nothing but them."""
    import sqlite3

    import mdfts
    from mdfts.build import build_index

    kept = ("# Kiln\n\n> Fire slowly.\n> \n> \n>\n> \n> Then cool.\n\n"
            "- Load the shelves\n\n  \n  \n  \n  evenly.")
    for name, text in (("commented", QUOTED_COMMENTS), ("blank", kept + "\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "kiln.md").write_text(text, encoding="utf-8")
        build_index([tmp_path / name], tmp_path / f"{name}.db")
    db = tmp_path / "commented.db"
    with sqlite3.connect(db) as conn:
        assert conn.execute("select body from sections").fetchall() == [(kept,)]
        for word in ("TODO", "ask", "saggar", "wadding", "bisque", "kilnwash"):
            assert conn.execute("select count(*) from sections_fts where sections_fts match ?",
                                (word,)).fetchone() == (0,), word
            assert mdfts.search(db, word) == [], word
    for q in ("fire slowly", "shelves evenly", "kiln"):
        assert [(h.heading, h.score) for h in mdfts.search(db, q)] == [
            (h.heading, h.score) for h in mdfts.search(tmp_path / "blank.db", q)], q


def test_a_sections_comments_are_held_as_offsets_until_it_closes() -> None:
    """Each comment waits as two offsets (16 bytes, where a tuple took ~120: 8 MB of `<!---->`
    lines peaked at 300 MB in a build, now 171 MB) until its section closes, and is cut from that
    section only: none is held past it, and a later section's comments are not taken early."""
    from mdfts.parse import stream_blocks
    from mdfts.sections import Splitter

    text = "# A\n\n" + "<!---->\n" * 10_000 + "a\n\n## B\n<!-- GLAZE_OVEN_URL -->\nb\n"
    held: list[tuple[str, int]] = []
    splitter = Splitter("t.md", text, lambda s, _title: held.append((s.body, len(splitter.cut_from))), False)
    stream_blocks(text, splitter.feed)
    splitter.finish("", 0)
    assert held == [("# A\n\n" + "\n" * 10_000 + "a\n", 0), ("## B\n\nb", 0)]
    assert splitter.cut_from.itemsize == splitter.cut_to.itemsize == 8


def test_empty_file_has_no_sections() -> None:
    doc = split_sections("empty.md", "")
    assert (doc.sections, doc.lines, doc.title) == ((), 0, "empty")


def _markdown_it_heading_lines(text: str) -> list[int]:
    md = MarkdownIt("commonmark").use(front_matter_plugin).use(docs_site_markup).enable("table")
    return [t.map[0] + 1 for t in md.parse(text) if t.type == "heading_open" and t.map]


SAMPLE_FILES = sorted(p.relative_to(SAMPLE_DOCS).as_posix() for p in SAMPLE_DOCS.rglob("*.md"))


@pytest.mark.parametrize("rel", SAMPLE_FILES)
def test_heading_lines_equal_a_full_markdown_it_parse(rel: str) -> None:
    text = decode(rel, (SAMPLE_DOCS / rel).read_bytes())
    doc = split_sections(rel, text)
    ours = [(s.path, s.start_line) for s in doc.sections if s.level > 0]
    theirs = [(rel, line) for line in _markdown_it_heading_lines(text)]
    assert ours == theirs
    assert ours  # every sample file has headings: the comparison is not vacuous


def test_fixture_heading_lines_equal_a_full_markdown_it_parse() -> None:
    for path in sorted(FIXTURE_DOCS.rglob("*.md")):
        text = decode(path.name, path.read_bytes())
        ours = [s.start_line for s in split_sections(path.name, text).sections if s.level > 0]
        assert ours == _markdown_it_heading_lines(text), path.name


def test_sample_docs_are_found() -> None:
    assert len(SAMPLE_FILES) >= 20 and Path(SAMPLE_DOCS / SAMPLE_FILES[0]).is_file()


@pytest.mark.parametrize(
    ("heading", "anchor"),
    [
        ("हिन्दी भाषा", "हिन्दी-भाषा"),  # Devanagari vowel signs are marks (Mn, Mc): part of the word
        ("การติดตั้ง ระบบ", "การติดตั้ง-ระบบ"),  # so are Thai vowels and tone marks
        ("Cafe\u0301 menu", "cafe\u0301-menu"),  # a decomposed accent
        ("İstanbul", "i\u0307stanbul"),  # lower() gives i + a combining dot
        ("x² and ½ cup", "x-and--cup"),  # other numbers (No) are symbols to the slugger
        ("Ⓐ circled", "ⓐ-circled"),  # an alphabetic symbol stays
        ("a‿b tie", "a‿b-tie"),  # connector punctuation stays, as `_` does
        ("Ⅻ Roman", "ⅻ-roman"),  # a letter number stays
        ("🚀 Quick start", "-quick-start"),
        ("C++ & Rust", "c--rust"),
    ],
    ids=["devanagari", "thai", "combining-accent", "dotted-capital-i", "other-numbers", "circled-letter",
         "connector", "roman-numeral", "emoji", "punctuation"],
)
def test_anchors_are_github_sluggers(heading: str, anchor: str) -> None:
    """Anchors as github-slugger 2.0.0 spells them (each expected value is its output): a link to
    `#हिन्दी-भाषा` in a Hindi doc names this heading, and `show` and `check` agree with GitHub."""
    doc = split_sections("slug.md", f"# {heading}\n")
    assert [s.anchor for s in doc.sections] == [anchor]


@pytest.mark.parametrize(
    ("text", "heading", "anchor"),
    [
        ("## a  b\n", "a b", "a--b"),  # each space a hyphen, as written
        ("## [Link](http://x) and ![logo](i.png) `code`\n", "Link and code", "link-and--code"),  # the image's place
        ("## A <kbd>Ctrl</kbd>  key\n", "A Ctrl key", "a-ctrl--key"),
        ("## Tab\theading\n", "Tab heading", "tabheading"),  # whitespace other than a space is removed
        ("A heading that runs\nover two lines\n---\n", "A heading that runs over two lines",
         "a-heading-that-runsover-two-lines"),  # so is the line break of a setext heading
        ('## <img src="logo.png"> Features\n', "Features", "features"),  # leading whitespace is removed
        ("## My Section 🏃🏼\n", "My Section 🏃🏼", "my-section-"),  # before the emoji goes
    ],
    ids=["two-spaces", "image", "html", "tab", "setext-lines", "leading-image", "trailing-emoji"],
)
def test_an_anchor_slugs_the_heading_as_rendered(text: str, heading: str, anchor: str) -> None:
    """GitHub slugs a heading's text as the page has it (github-slugger agrees on every case here):
    its spacing is not collapsed, as the `heading` column's is, so a link that works on GitHub
    works with `show` and passes `check`."""
    [section] = split_sections("rendered.md", text).sections
    assert (section.heading, section.anchor) == (heading, anchor)


@pytest.mark.parametrize(
    ("line", "heading", "anchor"),
    [
        ("## Install the agent {#install}", "Install the agent", "install"),  # Hugo, Docusaurus, kramdown
        ("## Install the agent {: #setup .wide }", "Install the agent", "setup"),  # MkDocs' attr_list
        ('## Install {#inst .cls data-x="1 2"}', "Install", "inst"),  # Pandoc
        ("## Install the agent {: .wide }", "Install the agent", "install-the-agent"),  # a class only
        ("## Install the agent \\{#install}", "Install the agent {#install}", "install-the-agent-install"),
        ("## Set `{#id}`", "Set {#id}", "set-id"),  # in a code span: text
        ("## Braces {like this}", "Braces {like this}", "braces-like-this"),  # no attribute in it
    ],
    ids=["hugo", "mkdocs", "pandoc", "class-only", "escaped", "code-span", "not-attributes"],
)
def test_a_trailing_attribute_list_names_the_anchor(line: str, heading: str, anchor: str) -> None:
    """`## Title {#id}`, as every docs site generator reads it: the list is markup, not heading text,
    and its id is the section's anchor (a link to #id works there, and in `show` and `check`)."""
    [section] = split_sections("attrs.md", f"{line}\n\nText.\n").sections
    assert (section.heading, section.anchor, section.trail) == (heading, anchor, (heading,))
    assert split_sections("attrs.md", line.removeprefix("#")).title == heading  # as an h1, the title


def _text_and_tokens(block: str) -> tuple[str, set[tuple[str, str, str]]]:
    (t,) = split_sections("t.md", f"# T\n\n{block}").sections
    return t.text, {(tok.token, tok.kind, tok.source) for tok in t.tokens}


@pytest.mark.parametrize(
    ("block", "text", "tokens"),
    [
        ('!!! warning "Glaze first"\n\n    Fire the kiln-room-log at KILN_MAX.\n',
         "T\nGlaze first\nFire the kiln-room-log at KILN_MAX.", {("KILN_MAX", "env_var", "text")}),
        ("??? tip\n    Keep GLAZE_OVEN_URL short.\n\n    Then fire with --cone-six.\n",
         "T\nTip\nKeep GLAZE_OVEN_URL short.\nThen fire with --cone-six.",
         {("GLAZE_OVEN_URL", "env_var", "text"), ("--cone-six", "cli_flag", "text")}),
        ('- Load the shelves.\n\n    !!! note ""\n\n        Leave kiln-room-log gaps.\n',
         "T\nLoad the shelves.\nLeave kiln-room-log gaps.", set()),
        ("!!! danger loud\n    Hot.\n", "T\nDanger\nHot.", set()),
        # pymdownx.details takes a title with no type; Python-Markdown's admonition does not
        ('??? "Why does the kiln stall?"\n    Check KILN_MAX first.\n',
         "T\nWhy does the kiln stall?\nCheck KILN_MAX first.", {("KILN_MAX", "env_var", "text")}),
        ('=== "Electric"\n\n    Set KILN_MAX with --cone-six.\n\n=== "Gas"\n\n    Open the damper-2 valve.\n',
         "T\nElectric\nSet KILN_MAX with --cone-six.\nGas\nOpen the damper-2 valve.",
         {("KILN_MAX", "env_var", "text"), ("--cone-six", "cli_flag", "text"), ("damper-2", "name", "text")}),
        (":::tip[Cone six]\n`kiln.max`: the hottest cone.\n:::\n",
         "T\nCone six\nkiln.max: the hottest cone.", {("kiln.max", "dotted", "definition")}),
        (":::note Glaze safety\nWear a mask.\n:::\n", "T\nGlaze safety\nWear a mask.", set()),
        ('{{< figure src="/img/kiln-2.png" >}}\n\nFire slowly.\n\n{{% notice info %}}\nKeep KILN_MAX low.\n'
         '{{% /notice %}}\n{{< tabs\n  items="a,b" >}}\n',
         "T\nFire slowly.\nKeep KILN_MAX low.", {("KILN_MAX", "env_var", "text")}),
    ],
    ids=["admonition-after-a-blank-line", "collapsible-admonition", "admonition-in-a-list-item",
         "admonition-of-two-classes", "details-title-without-a-type", "tabs",
         "docusaurus-admonition", "docusaurus-title-after-a-space", "shortcode-lines"],
)
def test_docs_site_markup_is_read_as_its_text(block: str, text: str, tokens: set[tuple[str, str, str]]) -> None:
    """What MkDocs, Docusaurus and Hugo show of their markup: an admonition's or a tab's title and
    its indented body are prose (CommonMark reads the body as indented code), a Docusaurus
    `:::` line gives its title only, a line of Hugo shortcodes nothing a reader sees."""
    assert _text_and_tokens(block) == (text, tokens)


@pytest.mark.parametrize(
    ("block", "text"),
    [
        ("!!! Stop !!!\n    Not an admonition.\n", "T\n!!! Stop !!!\n    Not an admonition."),
        ('!!! "No type"\n    Not an admonition.\n', 'T\n!!! "No type"\n    Not an admonition.'),
        ('=== Tab without quotes\n    text\n', "T\n=== Tab without quotes\n    text"),
        ("::: \nNo name.\n", "T\n::: \nNo name."),
        ("{{< a >}} and words\n", "T\n{{< a >}} and words"),
        ("{{< never closed\n\nText.\n", "T\n{{< never closed\nText."),
        ("    !!! note\n        code\n", "T\n!!! note\n    code"),
    ],
    ids=["not-python-markdown-s-admonition", "admonition-without-a-type", "tab-title-unquoted", "no-container-name", "shortcode-and-words",
         "shortcode-never-closed", "indented-code"],
)
def test_lines_that_only_look_like_docs_site_markup_are_text(block: str, text: str) -> None:
    assert _text_and_tokens(block)[0] == text


@pytest.mark.parametrize(
    ("text", "outline"),
    [
        ("---\n\n# Kiln\n\nFire it.\n", [(1, 3, 5)]),
        ("---\nkiln: 1\n\n# Kiln\n", [(0, 2, 3), (1, 4, 4)]),
        ("{{< toc >}}\n\n# Kiln\n", [(1, 3, 3)]),
        ("***\n{{< toc >}}\n# Kiln\n", [(1, 3, 3)]),
        (":::note\nLead.\n:::\n# Kiln\n", [(0, 1, 3), (1, 4, 4)]),
    ],
    ids=["rule-then-heading", "rule-then-text", "shortcode-then-heading", "rule-and-shortcode", "admonition-lead"],
)
def test_a_rule_or_shortcode_alone_makes_no_lead_section(text: str, outline: list[tuple[int, int, int]]) -> None:
    """A first line `---` with no closing `---` is a rule, not front matter; like a shortcode line,
    it is nothing a reader reads, so alone before the first heading it opens no lead section."""
    doc = split_sections("t.md", text)
    assert ([(s.level, s.start_line, s.end_line) for s in doc.sections], doc.front_matter) == (outline, {})
