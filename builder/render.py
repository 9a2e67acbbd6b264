"""Section markdown → inert, size-bounded HTML for web pages, and plain snippets with <mark>.

Everything here is linear in its input (or capped): a page of a hostile docs tree must not hold
a server worker. The terminal keeps its own highlighting (cli.py); this module is HTML only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from html import escape

from mdfts.parse import docs_site_line, plain_inline, render_html

# A section page renders at most this much of a section's markdown; lists (search results,
# table rows, 10 a page) a preview. markdown-it's inline parser is quadratic on some runs
# (unclosed `![`: 0.1 s at 5 KB, 1.0 s at 40 KB on a loaded 2-core machine), so the caps bound
# the time as well as the size: about 0.25 s a section page, 0.02 s a preview.
PAGE_CHARS = 20_000
PREVIEW_CHARS = 2_000
# A pipe table renders one <td> per column for every row, however short the row: 36 KB of
# `|a|a|...` headers over rows of `x` is 1.8 million cells (13 MB of HTML). Past this many
# cells a section's tables are shown as their source text instead.
MAX_TABLE_CELLS = 20_000
# The rendered HTML may be at most this many times the markdown it came from, else the
# section is shown as escaped text. Link targets are counted before anything is drawn: a
# reference defined once with a long target and used thousands of times (`[a][a]...`) is
# thousands of copies of it (200 MB from 24 KB).
MAX_GROWTH = 8

# A heading, trail or token named in a list, a crumb, a link or a card's title is cut to this
# many characters: markdown allows a 100 KB heading, and a section page named 200 children.
LABEL_CHARS = 200

_DELIMITER_ROW = re.compile(r"^ {0,3}\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")


def table_cells(text: str) -> int:
    """An upper bound of the cells the pipe tables in `text` render to (columns x rows)."""
    cells = 0
    columns = 0
    for line in text.splitlines():
        if columns and line.strip():
            cells += columns
        elif "-" in line and "|" in line and _DELIMITER_ROW.match(line):
            columns = line.strip().strip("|").count("|") + 1
            cells += 2 * columns  # the header row and this one
        else:
            columns = 0
    return cells


def label(text: str, limit: int = LABEL_CHARS) -> str:
    """`text`, or its first `limit` characters and an ellipsis: a heading or token as a page names it."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _cut(text: str, limit: int) -> str:
    """`text` cut at a line end at or before `limit` characters (at `limit` if there is none)."""
    if len(text) <= limit:
        return text
    end = text.rfind("\n", 0, limit)
    return text[: end if end > limit // 2 else limit]


def render_section(body: str, limit: int = PAGE_CHARS, rewrite_link: Callable[[str], str | None] | None = None,
                   title: bool = False) -> str:
    """Safe HTML of a section's markdown, at most `limit` characters of it; a note says what was
    left out. Raw HTML is escaped, links other than http(s)/mailto/relative are dropped, and
    `rewrite_link` (see render_html) places the relative ones. With `title` (a section's own
    page) its heading is the one <h1>; without it there is none (a card, a table cell: the page
    has its own)."""
    text = _cut(body, limit)
    tables = table_cells(text) <= MAX_TABLE_CELLS
    most = MAX_GROWTH * max(len(text), 1024)
    out = render_html(text, tables=tables, rewrite_link=rewrite_link, max_chars=most, title=title)
    if out is None or len(out) > most:
        out = f"<pre>{escape(text)}</pre>"
    if not tables:
        out = ('<p class="mdfts-note">Tables in this section are too large to draw; '
               "they are shown as their source.</p>") + out
    if len(text) < len(body):
        out += (f'<p class="mdfts-note mdfts-cut">Shown: the first {len(text):,} of '
                f"{len(body):,} characters.</p>")
    return out


# --- snippets -----------------------------------------------------------------------------

SNIPPET_WORDS = 32
SNIPPET_WORD_CHARS = 60  # a longer "word" (a URL, 100 KB of `![`) is cut
# A snippet is looked for in this much of the section's text (hits further in are rare and
# the CLI's snippet, from FTS5, covers them).
SNIPPET_SCAN_CHARS = 100_000
_STOP = frozenset(
    "a an and are as at be by can do does for from how i if in is it my of on or that the this "
    "to what when where which who why with you your".split()
)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}#{1,6}(?:\s+|$)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_TRIM = '"\'`([{<)]}>.,:;!?'
_MARKUP_FIRST = frozenset("!?=:{")  # how a line of docs site markup starts (parse.docs_site_line)


def _clean_lines(text: str) -> str:
    """Markdown → one line of readable text: no fence lines or info strings, no table pipes or
    delimiter rows, no heading marks, docs site markup as its titles, inline markup reduced to its
    text."""
    out: list[str] = []
    lines = text.splitlines()
    if lines and _HEADING.match(lines[0]):
        lines = lines[1:]  # the heading: a card shows it already
    for line in lines:
        if _FENCE.match(line) or _SETEXT.match(line) or (("-" in line and "|" in line) and _DELIMITER_ROW.match(line)):
            continue
        if line.lstrip(" \t")[:1] in _MARKUP_FIRST and (shown := docs_site_line(line)) is not None:
            line = shown  # an admonition's, a tab's or a container's title; nothing of a shortcode
        line = _HEADING.sub("", line)
        if line.lstrip().startswith("|"):
            line = " ".join(cell.strip() for cell in line.strip().strip("|").split("|"))
        out.append(plain_inline(line))
    return " ".join(" ".join(out).split())


def query_terms(q: str) -> list[str]:
    """The lower-case words of a query a snippet marks (stop words and 1-letter words dropped)."""
    terms: list[str] = []
    for raw in (q or "").split()[:64]:
        t = raw.strip(_TRIM).lower()
        if len(t) > 1 and t not in _STOP and t not in terms:
            terms.append(t)
    return terms


def _hits(word: str, terms: list[str]) -> str | None:
    """The term `word` matches: the same word, a word it starts ("roll" ~ "rollback"), or the
    same five-letter stem ("rolling" ~ "rollback"), as the ranking matches words."""
    w = word.strip(_TRIM).lower()
    bare = w.lstrip("-")  # `force` marks `--force`
    if not w:
        return None
    for t in terms:
        for c in (w, bare) if bare != w else (w,):
            if c == t or (len(t) >= 4 and c.startswith(t)) or (len(t) >= 5 and c[:5] == t[:5]):
                return t
    return None


def _marked(word: str) -> str:
    core = word.strip(_TRIM) or word
    start = word.find(core)
    head, tail = word[:start], word[start + len(core):]
    return f"{escape(head)}<mark>{escape(core)}</mark>{escape(tail)}"


def snippet_html(body: str, q: str, words: int = SNIPPET_WORDS) -> str:
    """An HTML snippet of a section: the window of `words` words naming the most query terms,
    HTML-escaped first, then each matching word wrapped in <mark>."""
    tokens = _clean_lines(body[:SNIPPET_SCAN_CHARS]).split(" ")
    terms = query_terms(q)
    marks = [_hits(w, terms) for w in tokens] if terms else [None] * len(tokens)
    best, best_score = 0, 0
    if terms:
        # Slide a window over the words, scoring it by distinct terms, then by hits.
        counts: dict[str, int] = {}
        hits = 0
        for i, m in enumerate(marks):
            if m:
                counts[m] = counts.get(m, 0) + 1
                hits += 1
            j = i - words
            if j >= 0 and marks[j]:
                mj = marks[j]
                assert mj is not None
                counts[mj] -= 1
                hits -= 1
                if not counts[mj]:
                    del counts[mj]
            score = len(counts) * 10_000 + hits
            if score > best_score:
                best, best_score = max(0, i - words + 1), score
        if best_score:
            best = max(0, min(best, len(tokens) - words))
    window = range(best, min(best + words, len(tokens)))
    words_shown = [t if len(t) <= SNIPPET_WORD_CHARS else t[:SNIPPET_WORD_CHARS] + "…" for t in tokens]
    parts = [_marked(words_shown[i]) if marks[i] else escape(words_shown[i]) for i in window]
    html = " ".join(parts)
    if best > 0:
        html = "… " + html
    if best + words < len(tokens) or len(body) > SNIPPET_SCAN_CHARS:
        html += " …"
    return html
