"""Markdown text → markdown-it block tokens, plus inline helpers; the one place markdown-it is built."""

from __future__ import annotations

import dataclasses
import html
import re
import types
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any, Literal, cast

from markdown_it import MarkdownIt
from markdown_it.parser_block import RuleFuncBlockType
from markdown_it.ruler import RuleOptionsType, Ruler
from markdown_it.rules_block import StateBlock
from markdown_it.token import Token
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.container import container_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

__all__ = ["Token", "docs_site_line", "docs_site_markup", "parse_blocks", "stream_blocks", "heading_attributes",
           "rendered_heading", "plain_inline", "split_code_spans", "slugify", "render_html", "raw_html",
           "comment_spans", "inline_comment_spans", "without_comments"]


TOML_FRONT_MATTER = "+++"


def _toml_front_matter_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Hugo's TOML front matter: a first line `+++`, up to the next line `+++` (trailing spaces
    allowed on both). A `front_matter` token as the YAML plugin's, its markup `+++`; with no
    closing line it is no front matter, and the lines are text. Only the file's own first line
    opens it: a block quote's content starts on line 0 too, after its `>`."""
    if start != 0 or state.bMarks[0] != 0 or state.src[:state.eMarks[0]].rstrip() != TOML_FRONT_MATTER:
        return False
    line = 1
    while line < end and state.src[state.bMarks[line]:state.eMarks[line]].rstrip() != TOML_FRONT_MATTER:
        line += 1
    if line >= end:
        return False
    if not silent:
        token = state.push("front_matter", "", 0)
        token.hidden, token.markup, token.block = True, TOML_FRONT_MATTER, True
        token.content = state.src[state.bMarks[1]:state.bMarks[line]] if line > 1 else ""
        token.map = [0, line + 1]
        state.line = line + 1
    return True


def _front_matters(md: MarkdownIt) -> None:
    """Front matter as YAML between `---` lines (mdit-py-plugins) or TOML between `+++` lines."""
    md.use(front_matter_plugin)
    md.block.ruler.before("front_matter", "front_matter_toml", _toml_front_matter_rule,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})


# Python-Markdown's admonition line (MkDocs; `???` and `???+` are pymdownx.details), as its
# AdmonitionProcessor matches one: a type of word characters (more class names may follow), then
# a title in quotes, if any. The admon plugin alone takes any text after the marker (`!!! Stop !!!`).
_ADMONITION = re.compile(r'(?:(?:!!!|\?\?\?\+?) ?([\w-]+)(?: +[\w-]+)*(?: +"([^\n]*)")?|\?\?\?\+? +"([^\n]*)") *')


def _admonition_title(line: re.Match[str]) -> str:
    """The title Python-Markdown shows: the quoted one ("" for `""`: none), else the type's name.
    pymdownx.details also takes a title with no type (`??? "Why?"`); an admonition does not."""
    quoted = line.group(2) if line.group(3) is None else line.group(3)
    return line.group(1).title() if quoted is None else quoted


def _python_markdown_admonition(rule: RuleFuncBlockType) -> RuleFuncBlockType:
    """The admon plugin's rule on the lines Python-Markdown reads as an admonition only, with its
    title (the plugin's, for `!!! danger loud`, is `loud`)."""

    def admonition(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        pos = state.bMarks[start] + state.tShift[start]
        line = _ADMONITION.fullmatch(state.src, pos, state.eMarks[start])
        at = len(state.tokens)
        if line is None or not rule(state, start, end, silent):
            return False
        if not silent and at + 2 < len(state.tokens) and state.tokens[at + 1].type == "admonition_title_open":
            state.tokens[at + 2].content = _admonition_title(line)
        return True

    return admonition


# pymdownx.tabbed's tab: `=== "Title"` (`===+` selects it, `===!` starts a new set of tabs), its
# content indented four spaces under it.
_TAB = re.compile(r'===(?:\+!?|!\+?)? +"([^\n]*)" *')


def _tab_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A tab: tabbed_open, its title as tabbed_title_open, inline, tabbed_title_close (as the admon
    plugin gives an admonition's), the blocks of its content, tabbed_close. The content ends as
    an admonition's does: before a line indented less that is not blank, or at a second blank line."""
    if state.is_code_block(start):
        return False
    pos = state.bMarks[start] + state.tShift[start]
    tab = _TAB.fullmatch(state.src, pos, state.eMarks[start])
    if tab is None:
        return False
    if silent:
        return True
    old_indent, old_max, old_parent = state.blkIndent, state.lineMax, state.parentType
    state.blkIndent += 4
    line, was_blank = start + 1, False
    while line < end:
        blank = state.sCount[line] < state.blkIndent  # (a blank line's indent is its spaces)
        if blank and (was_blank or state.bMarks[line] + state.tShift[line] < state.eMarks[line]):
            break
        was_blank = blank
        line += 1
    state.lineMax, state.parentType = line, "tabbed"
    token = state.push("tabbed_open", "div", 1)
    token.markup, token.info, token.map = state.src[pos:tab.start(1) - 1].rstrip(), tab.group(1), [start, line]
    token.attrs = {"class": "tabbed"}
    token = state.push("tabbed_title_open", "p", 1)
    token.map, token.attrs = [start, start + 1], {"class": "tabbed-title"}
    token = state.push("inline", "", 0)
    token.content, token.map, token.children = tab.group(1), [start, start + 1], []
    state.push("tabbed_title_close", "p", -1)
    state.md.block.tokenize(state, start + 1, line)
    state.push("tabbed_close", "div", -1)
    state.blkIndent, state.lineMax, state.parentType = old_indent, old_max, old_parent
    state.line = line
    return True


# A Docusaurus admonition (`:::note`, `:::tip[Title]`, `:::tip Title`, VuePress' `::: tip`): a
# container of markdown up to a `:::` line, a title shown above it (its name when it has none).
_DIRECTIVE = re.compile(r" ?([A-Za-z][\w-]*)(?:\[([^\n]*)\])?(?:\{[^{}\n]*\})?(?: +([^\n]*))?")
DIRECTIVE = "directive"


def _directive_title(params: str) -> str | None:
    """The title of a `:::` line's parameters; None when they name no container."""
    m = _DIRECTIVE.fullmatch(params.rstrip())
    if m is None:
        return None
    return (m.group(2) or m.group(3) or m.group(1).title()).strip()


def _directive_name(params: str) -> str:
    m = _DIRECTIVE.fullmatch(params.rstrip())
    return m.group(1).lower() if m else ""


def _titled_directive(rule: RuleFuncBlockType) -> RuleFuncBlockType:
    """The container plugin's rule, its title after the opening token as an admonition's is
    (directive_title_open, inline, directive_title_close)."""

    def directive(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        at = len(state.tokens)
        if not rule(state, start, end, silent):
            return False
        if not silent:
            opening = state.tokens[at]
            opening.attrs = {"class": f"admonition {_directive_name(opening.info)}"}
            title = _directive_title(opening.info) or ""
            level, where = opening.level + 1, [start, start + 1]
            state.tokens[at + 1:at + 1] = [
                Token("directive_title_open", "p", 1, map=where, level=level, block=True,
                      attrs={"class": "admonition-title"}),
                Token("inline", "", 0, map=where, level=level + 1, content=title, children=[], block=True),
                Token("directive_title_close", "p", -1, level=level, block=True),
            ]
        return True

    return directive


def _shortcode_rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Lines of Hugo shortcodes (`{{< figure src="a.png" >}}`, `{{% notice %}}`), nothing else
    on them: one hidden `shortcode` token, as front matter is. A shortcode may run over lines,
    not over a blank one or one that opens another (else each of a run of unclosed `{{<` lines,
    tried in turn, read all those after it). Each `{{` is matched to the first close of its kind
    after it: linear."""
    if state.is_code_block(start):
        return False
    src, line = state.src, start
    first = pos = state.bMarks[start] + state.tShift[start]
    while True:
        if not src.startswith(("{{<", "{{%"), pos):
            return False
        close = ">}}" if src[pos + 2] == "<" else "%}}"
        pos += 3
        while (pos := src.find(close, pos, state.eMarks[line])) < 0:
            line += 1
            if line >= end or state.sCount[line] < state.blkIndent:
                return False  # not closed before the container's end
            pos = state.bMarks[line] + state.tShift[line]
            if pos >= state.eMarks[line] or src.startswith("{{", pos):
                return False  # not closed before a blank line or another shortcode
        pos = state.skipSpaces(pos + 3)
        if pos >= state.eMarks[line]:
            break
    if not silent:
        token = state.push("shortcode", "", 0)
        token.hidden, token.block, token.markup = True, True, src[first:first + 3]
        token.content = src[state.bMarks[start]:state.eMarks[line]]
        token.map = [start, line + 1]
    state.line = line + 1
    return True


def docs_site_line(line: str) -> str | None:
    """What a reader sees of one line of docs site markup: the title of an admonition, a tab or a
    `:::` container ("" when it shows none), "" for a closing `:::` or a line of shortcodes; None
    for any other line. Line by line, as a snippet reads a section (indented code not known)."""
    text = line.strip(" \t")
    first = text[:1]
    if first in ("!", "?") and (admonition := _ADMONITION.fullmatch(text)):
        return _admonition_title(admonition)
    if first == "=" and (tab := _TAB.fullmatch(text)):
        return tab.group(1)
    if text.startswith(":::"):
        params = text.lstrip(":")
        return "" if not params.strip() else _directive_title(params)
    if text.startswith(("{{<", "{{%")) and text.endswith((">}}", "%}}")):
        return ""
    return None


def docs_site_markup(md: MarkdownIt) -> None:
    """What docs site generators add to markdown, read as they read it: MkDocs' admonitions
    (`!!! note "Title"`, `??? tip`) and tabs (`=== "Title"`) over content indented four spaces
    (CommonMark reads it as indented code), Docusaurus' `:::note` containers, and lines of Hugo
    shortcodes (a hidden `shortcode` token: a reader sees what they make, not their text)."""
    # (the chains each plugin's rule is in: it ends a paragraph, a reference, a quote or a list)
    alt: RuleOptionsType = {"alt": ["paragraph", "reference", "blockquote", "list"]}
    rules = md.block.ruler
    md.use(admon_plugin)
    rules.at("admonition", _python_markdown_admonition(rules.__rules__[rules.__find__("admonition")].fn), alt)
    rules.before("fence", "tabbed", _tab_rule, alt)
    md.use(container_plugin, DIRECTIVE, validate=lambda params, *_: _directive_title(params) is not None)
    name = f"container_{DIRECTIVE}"
    rules.at(name, _titled_directive(rules.__rules__[rules.__find__(name)].fn), alt)
    rules.before("fence", "shortcode", _shortcode_rule, alt)


def _block_parser_config() -> MarkdownIt:
    # CommonMark + tables + front matter + docs site markup, block level only: the inline rule is
    # off, so `inline` tokens keep their raw source. Same headings and line maps as a full parse,
    # at ~3x the speed.
    return MarkdownIt("commonmark").use(_front_matters).use(docs_site_markup).enable("table").disable("inline")


@lru_cache(maxsize=1)
def _inline_parser() -> MarkdownIt:
    return MarkdownIt("commonmark")


# Link schemes a rendered page may carry; anything else (javascript:, vbscript:, data:, file:)
# is not made a link. Control characters and spaces are dropped first, as browsers drop them.
_SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_URL_JUNK = re.compile(r"[\x00-\x20\x7f]+")


def _safe_link(url: str) -> bool:
    # markdown-it percent-encodes the target before it asks: decode it to see the scheme.
    scheme = _SCHEME.match(_URL_JUNK.sub("", urllib.parse.unquote(url)))
    return scheme is None or scheme.group(1).lower() in _SAFE_SCHEMES


@lru_cache(maxsize=1)
def _linkless_inline() -> MarkdownIt:
    # For inline text where no link or image can close (no `]`; or no `)` and no reference
    # definitions): markdown-it would still scan to the end of the paragraph from every `[`,
    # `![` or `](` (quadratic: 20,000 unclosed `![` took a second, 1,000 of them 50 ms).
    return MarkdownIt("commonmark", {"html": False}).disable(["link", "image"])


def _inline_core_rule(state: Any) -> None:
    # markdown-it's own core `inline` rule, choosing the linkless rules where they give the same.
    for token in state.tokens:
        if token.type == "inline":
            if token.children is None:
                token.children = []
            text = token.content
            links = "]" in text and (")" in text or bool(state.env.get("references")))
            parser = state.md if links else _linkless_inline()
            parser.inline.parse(token.content, state.md, state.env, token.children)


def _rewrite_links(state: Any) -> None:
    """Each link's href through env["rewrite_link"] (when given): a new target, or None for no
    link at all (its text stays, in a <span>). Links do not nest, so a dropped link's close is
    the next link_close. Each target is placed once: one reference definition may be used by
    thousands of links."""
    rewrite = state.env.get("rewrite_link")
    if rewrite is None:
        return
    placed: dict[str, str | None] = {}
    for token in state.tokens:
        dropped = False
        for child in token.children or ():
            if child.type == "link_open":
                href = str(child.attrGet("href") or "")
                target = placed[href] if href in placed else placed.setdefault(href, rewrite(href))
                dropped = target is None
                if dropped:
                    child.tag, child.attrs = "span", {}
                else:
                    child.attrSet("href", target)
            elif child.type == "link_close" and dropped:
                child.tag, dropped = "span", False


@lru_cache(maxsize=2)
def _html_renderer(tables: bool = True) -> MarkdownIt:
    # Raw HTML in the docs is shown as text, never passed through: the page is someone's browser.
    md = MarkdownIt("commonmark", {"html": False}).use(_front_matters).use(docs_site_markup)
    if tables:
        md.enable("table")
    md.validateLink = _safe_link  # type: ignore[method-assign]
    md.core.ruler.at("inline", _inline_core_rule)
    md.core.ruler.after("inline", "mdfts_links", _rewrite_links)
    return md


def render_html(text: str, tables: bool = True, rewrite_link: Callable[[str], str | None] | None = None,
                max_chars: int | None = None, title: bool | None = None) -> str | None:
    """Markdown → inert HTML (CommonMark, plus tables unless `tables` is False): raw HTML escaped,
    links only to http(s), mailto and relative targets; `rewrite_link` maps each link's target
    (as markdown-it percent-encodes it) to the one to use, or None to drop the link and keep its
    text. None, without drawing it, when the HTML would be longer than `max_chars`. `title` True:
    a heading that starts the text is the one <h1> (a page's title), any other h1 an h2; False:
    no h1 (a part of a page under its own h1); None: headings as written."""
    md = _html_renderer(tables)
    env = {"rewrite_link": rewrite_link}
    tokens = md.parse(text, env)
    if max_chars is not None and _drawn_chars(tokens) > max_chars:
        return None
    if title is not None:
        _retitle(tokens, title)
    html_out: str = md.renderer.render(tokens, md.options, env)
    return html_out


def _retitle(tokens: list[Token], title: bool) -> None:
    """With `title`, the heading that starts the text (a section's own) as h1; any other h1 (one
    quoted in the body, `> # x`; every one without `title`) as h2: one h1 a page at most."""
    own = 3 if title and tokens and tokens[0].type == "heading_open" else 0  # heading_open, inline, heading_close
    for n, token in enumerate(tokens):
        if token.type in ("heading_open", "heading_close"):
            token.tag = "h1" if n < own else "h2" if token.tag == "h1" else token.tag


def _drawn_chars(tokens: list[Token]) -> int:
    """Characters of the text and attributes the tokens are drawn with, before escaping: no more
    than the HTML. A link holds its whole target, so a reference defined once and used `[a]`
    thousands of times is thousands of times its target."""
    total = 0
    for token in tokens:
        total += sum(len(str(v)) for v in token.attrs.values())
        if token.children is None:
            total += len(token.content)
        else:  # an inline token: its content is its children's source
            total += _drawn_chars(token.children)
    return total


def parse_blocks(text: str) -> list[Token]:
    """Block tokens of a document; `map` is 0-based and end-exclusive, in lines of `text`.
    Table rows come as stream_blocks() gives them."""
    tokens: list[Token] = []
    stream_blocks(text, tokens.extend)
    return tokens


# Token's fields and their defaults, as _StreamState.push sets them.
_TOKEN_FIELDS = (("type", None), ("tag", None), ("nesting", None), ("attrs", dict), ("map", None), ("level", 0),
                 ("children", None), ("content", ""), ("markup", ""), ("info", ""), ("meta", dict),
                 ("block", False), ("hidden", False))
_FAST_TOKENS = tuple(
    (f.name, f.default_factory if f.default_factory is not dataclasses.MISSING
     else None if f.default is dataclasses.MISSING else f.default)
    for f in dataclasses.fields(Token)
) == _TOKEN_FIELDS
_new_token = object.__new__


class _StreamState(StateBlock):
    """markdown-it's block state, lean where a whole document's tokens cost the most memory.

    - Tokens go to `sink` after each top-level block, so only one block's tokens are alive at a
      time (~300 bytes a token: a 50 MB file held 1.9 GB of them).
    - A table row is one `tr_open` token whose meta["cells"] holds (column, content) of its
      non-empty cells. The table rule pushes td_open, inline and td_close for every cell, padding
      included (up to 65,536 per table): 36 KB of `|a|a|...` rows took 1.47 GB as cell tokens.
      Only while the table rule runs (see _fold_rows): every other push is markdown-it's own.
    """

    def __init__(self, src: str, md: MarkdownIt, sink: Callable[[list[Token]], None],
                 env: dict[str, Any] | None = None) -> None:
        super().__init__(src, md, {} if env is None else env, [])
        self.sink = sink
        self.row: Token | None = None  # the open tr_open token, while a table row is pushed
        self.column = 0
        self.scratch = Token("inline", "", 0)  # what the table rule fills for each cell

    def push(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        """StateBlock.push, making the token without Token's dataclass __init__ and __post_init__
        (a third of a push, on every block token): the fields Token(ttype, tag, nesting) sets,
        then block and level as push sets them. Only while Token has the fields it had when this
        was written (_FAST_TOKENS); markdown-it's own push else."""
        if not _FAST_TOKENS:
            return StateBlock.push(self, ttype, tag, nesting)
        token = _new_token(Token)
        token.type, token.tag, token.nesting, token.attrs, token.map = ttype, tag, nesting, {}, None
        token.children, token.content, token.markup, token.info = None, "", "", ""
        token.meta, token.block, token.hidden = {}, True, False
        if nesting < 0:
            self.level -= 1  # closing tag
        token.level = self.level
        if nesting > 0:
            self.level += 1  # opening tag
        self.tokens.append(token)
        return token

    def push_folding_cells(self, ttype: str, tag: str, nesting: Literal[-1, 0, 1]) -> Token:
        """push() while the table rule runs: a row's cells go into its tr_open token."""
        row = self.row
        if row is not None:
            if ttype in ("td_open", "th_open", "inline"):
                self.scratch.content = ""
                return self.scratch  # the rule sets attrs, map and content on it; content is read below
            if ttype in ("td_close", "th_close"):
                if self.scratch.content:
                    row.meta["cells"].append((self.column, self.scratch.content))
                self.column += 1
                return self.scratch
            if ttype == "tr_close":
                self.row = None
        token = _StreamState.push(self, ttype, tag, nesting)
        if ttype == "tr_open":
            self.row, self.column = token, 0
            token.meta["cells"] = []
        return token


def _with_fast_split(table: RuleFuncBlockType) -> RuleFuncBlockType:
    """markdown-it's table rule as it is, but for its escapedSplit (a row's cells, split at each
    `|` no backslash escapes; an escaped one stays, without its backslash): a row without an
    escaped pipe is str.split, where escapedSplit steps through it a character at a time (~0.3 s
    of a table-heavy 20 MB build). The same code with its own globals, so the library and every
    other parser keep the original; a rule without an escapedSplit is left as it is."""
    names = getattr(table, "__globals__", None)
    escaped_split = names.get("escapedSplit") if names is not None else None
    if escaped_split is None:
        return table

    def split(row: str) -> list[str]:
        return row.split("|") if "\\|" not in row else cast("list[str]", escaped_split(row))

    rule = cast(types.FunctionType, table)
    fast = types.FunctionType(rule.__code__, {**rule.__globals__, "escapedSplit": split}, rule.__name__,
                              rule.__defaults__, rule.__closure__)
    return cast(RuleFuncBlockType, fast)


def _fold_rows(table: RuleFuncBlockType) -> RuleFuncBlockType:
    """The table rule, pushing through _StreamState.push_folding_cells while it runs (silent, it
    pushes nothing)."""

    def fold_rows(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if silent or not isinstance(state, _StreamState):
            return table(state, start, end, silent)
        state.push = state.push_folding_cells  # type: ignore[method-assign]  # this state's only
        try:
            return table(state, start, end, silent)
        finally:
            del state.push

    return fold_rows


# What a line must start with (its first character after the indent) for a block rule to match
# it, or to end a paragraph, list or quote with it. Each of these rules returns False on any other
# line, and on an indented code line, before it changes anything: markdown-it tries every rule
# on every line (and every terminator on each paragraph line, twice with lheading), which was
# ~30% of the block parse.
_FIRST_CHARS = {
    rule: frozenset(chars) for rule, chars in (
        ("fence", "~`"), ("blockquote", ">"), ("hr", "*-_"), ("list", "*-+0123456789"), ("reference", "["),
        ("html_block", "<"), ("heading", "#"), ("front_matter_toml", "+"), ("admonition", "!?"),
        ("tabbed", "="), (f"container_{DIRECTIVE}", ":"), ("shortcode", "{"),
    )
}
# Rules tried only where their own first test can pass: code on indented lines, front matter on
# the first line, a table where the next line starts like its delimiter row (|, - or :).
_CODE, _FRONT_MATTER, _TABLE = "code", "front_matter", "table"
_TABLE_DELIMITER = frozenset("|-:")

_Plan = tuple[tuple[RuleFuncBlockType, str], ...]  # (rule, the check it waits for: "" none, _FRONT_MATTER, _TABLE)


def _dispatcher(rules: list[tuple[str, RuleFuncBlockType]], code_enabled: bool) -> RuleFuncBlockType:
    """One rule that tries `rules` in order as markdown-it would, leaving out those whose first
    test the line fails; True as soon as one matches."""

    def plan(first: str, code: bool) -> _Plan:
        kept: list[tuple[RuleFuncBlockType, str]] = []
        for name, fn in rules:
            if name in _FIRST_CHARS and (code or first not in _FIRST_CHARS[name]):
                continue
            if name == _CODE and not code:
                continue
            kept.append((_fold_rows(_with_fast_split(fn)) if name == _TABLE else fn,
                         name if name in (_FRONT_MATTER, _TABLE) else ""))
        return tuple(kept)

    special = {c for chars in _FIRST_CHARS.values() for c in chars}
    by_first = {c: plan(c, False) for c in special}
    other = plan("", False)
    in_code = plan("", True)

    def dispatch(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        src = state.src
        pos = state.bMarks[start] + state.tShift[start]
        if code_enabled and state.sCount[start] - state.blkIndent >= 4:
            tried = in_code
        else:
            tried = by_first.get(src[pos], other) if pos < len(src) else other
        for rule, check in tried:
            if check:
                if check == _TABLE:
                    nxt = start + 1
                    if nxt >= end:
                        continue
                    at = state.bMarks[nxt] + state.tShift[nxt]
                    if at >= state.eMarks[nxt] or src[at] not in _TABLE_DELIMITER:
                        continue
                elif start != 0:  # front matter
                    continue
            if rule(state, start, end, silent):
                return True
        return False

    return dispatch


class _DispatchRuler(Ruler[RuleFuncBlockType]):
    """markdown-it's block ruler whose every chain (blocks, and the terminators of a paragraph,
    list, quote or reference) is one _dispatcher over the same rules in the same order."""

    def __init__(self, rules: Ruler[RuleFuncBlockType]) -> None:
        super().__init__()
        self.__rules__ = rules.__rules__
        self._chains: dict[str, list[RuleFuncBlockType]] = {}
        self._compiled: object = None  # the Ruler cache _chains were made from

    def getRules(self, chainName: str = "") -> list[RuleFuncBlockType]:  # noqa: N802 (markdown-it's name)
        # (paragraph, lheading and list ask for their terminators on every call)
        if self.__cache__ is None or self.__cache__ is not self._compiled:  # a rule changed
            super().getRules(chainName)  # compiles markdown-it's chains
            active = [r for r in self.__rules__ if r.enabled]
            code_enabled = any(r.name == _CODE for r in active)
            self._chains = {
                chain: [_dispatcher([(r.name, r.fn) for r in active if not chain or chain in r.alt], code_enabled)]
                for chain in (self.__cache__ or {})
            }
            self._compiled = self.__cache__
        return self._chains.get(chainName, [])


# Tokens handed over at once, at the first top-level block boundary past this many: a few
# kilobytes alive, and one sink call for a page of small blocks rather than one per paragraph
# (each call is a stage switch the build's clock reads).
SINK_BATCH = 256


def _hand_over(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """The first block rule, matching nothing: before a top-level block, hand the tokens of the
    blocks before it to the state's sink. Level 0 between two blocks: no rule holds an index into
    them any more (lists mark tight paragraphs by index, but only within their own call). It is
    in no rule's terminator list, so it runs once a block, not once a line as those do."""
    if state.level == 0 and len(state.tokens) >= SINK_BATCH and isinstance(state, _StreamState):
        tokens, state.tokens = state.tokens, []
        state.sink(tokens)
    return False


@lru_cache(maxsize=1)
def _stream_parser() -> MarkdownIt:
    md = _block_parser_config()
    md.block.ruler.before(md.block.ruler.get_all_rules()[0], "mdfts_hand_over", _hand_over)
    md.block.ruler = _DispatchRuler(md.block.ruler)
    return md


def stream_blocks(text: str, sink: Callable[[list[Token]], None], env: dict[str, Any] | None = None) -> None:
    """Parse `text` as parse_blocks() does, handing `sink` the tokens one top-level block at a time.

    Memory is that of the largest block, not of the document; the cells of a table row are
    folded into the row's token (see _StreamState). `env` collects reference definitions.
    """
    if not text:
        return
    md = _stream_parser()
    # markdown-it's core `normalize` rule, which the block parser alone does not run.
    src = text.replace("\r\n", "\n").replace("\r", "\n").replace("\0", "\ufffd")
    state = _StreamState(src, md, sink, env)
    md.block.tokenize(state, state.line, state.lineMax)
    if state.tokens:
        sink(state.tokens)


# What github-slugger keeps of a heading: letters, marks (a Devanagari or Thai vowel sign, a
# decomposed accent), decimal and letter numbers, connector punctuation, `-` and the space; plus
# the circled and squared letters Unicode calls alphabetic. Everything else (punctuation, emoji,
# other numbers such as ² and ½, control characters) goes. Python's \w drops marks and keeps ²,
# so an anchor spelled with it missed every Hindi or Thai heading (हिन्दी → हनद).
_SLUG_CATEGORIES = frozenset({"Nd", "Nl", "Pc"})
_SLUG_SYMBOLS = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))
_ASCII_NOT_SLUG = re.compile(r"[^A-Za-z0-9_\- ]")


def _slug_char(ch: str) -> bool:
    cat = unicodedata.category(ch)
    if cat[0] in "LM" or cat in _SLUG_CATEGORIES or ch in "- ":
        return True
    return cat == "So" and any(lo <= ord(ch) <= hi for lo, hi in _SLUG_SYMBOLS)


def slugify(title: str) -> str:
    """github-slugger's slug of a heading's text: lower case, every character it does not keep
    removed, each space a hyphen (no collapsing: `C++ & Rust` → `c--rust`)."""
    lower = title.lower()
    if lower.isascii():
        kept = _ASCII_NOT_SLUG.sub("", lower)
    else:
        kept = "".join([ch for ch in lower if _slug_char(ch)])
    return kept.replace(" ", "-")


# markdown-it's inline parser is quadratic on some long lines (50,000 unclosed `[a](`); a heading
# longer than this is not a real one, so it gets the linear plain_inline() instead.
MAX_INLINE_HEADING = 4096
# The characters that start an inline rule of the commonmark preset (escapes, entities, code,
# emphasis, links, images, autolinks, HTML, line breaks); text without them parses to itself.
_INLINE_MARKUP = re.compile(r"[\\&`*_\[\]!<>~\n]")


# A heading's trailing attribute list as the docs site generators read it (Hugo, Docusaurus,
# MkDocs' attr_list, Pandoc, kramdown): `{#id}`, `{: #id .class key="v w" }`; only ids, classes
# and key=value items, so `{like this}` stays text. Not after a backslash (`\{#id}` is text), and
# a list inside a code span ends with a backtick, not `}`.
_ATTRIBUTES = re.compile(
    r"""(?<!\\)\{:?[ \t]*((?:(?:[#.][\w-]+|[\w-]+=(?:"[^"]*"|'[^']*'|[^\s"'}]+))(?=[ \t}])[ \t]*)+)\}[ \t]*\Z""")
_ID = re.compile(r"(?:^|[ \t])#([\w-]+)")


def heading_attributes(raw: str) -> tuple[str, str]:
    """A heading's raw inline text without its trailing attribute list, and the list's id ("" when
    none): `Install {#setup .wide}` → ("Install", "setup")."""
    if not raw.endswith("}"):
        return raw, ""
    m = _ATTRIBUTES.search(raw)
    if m is None:
        return raw, ""
    ids = _ID.findall(m.group(1))
    return raw[:m.start()].rstrip(), ids[-1] if ids else ""


def rendered_heading(raw: str) -> str:
    """A heading's text as a page has it, what GitHub slugs: its text and code spans, spaced as
    written (an image or tag between two spaces leaves both), a line break as "\n"."""
    if len(raw) > MAX_INLINE_HEADING:
        return plain_inline(raw)
    if not _INLINE_MARKUP.search(raw):
        return raw  # nothing for the inline parser to do
    parts: list[str] = []
    for tok in _inline_parser().parseInline(raw):
        for child in tok.children or ():
            if child.type in ("text", "code_inline"):
                parts.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                parts.append("\n")
    return "".join(parts)


_BACKTICKS = re.compile(r"`+")


def _code_spans(raw: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of each code span: a backtick run closed by the next run of the same
    length, as CommonMark pairs them. Linear time; a regex with a lazy `.+?` is quadratic on long
    lines of unmatched backtick runs."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(raw)]
    next_same: list[int | None] = [None] * len(runs)
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        width = runs[i][1] - runs[i][0]
        next_same[i] = last.get(width)
        last[width] = i
    spans, i = [], 0
    while i < len(runs):
        j = next_same[i]
        if j is None:
            i += 1
            continue
        spans.append((runs[i][0], runs[j][1], raw[runs[i][1] : runs[j][0]]))
        i = j + 1
    return spans


def split_code_spans(raw: str) -> tuple[str, list[str]]:
    """Raw inline markdown → (the prose with code spans blanked out, the code spans' contents)."""
    if "`" not in raw:
        return raw, []
    if "``" not in raw:
        # Every backtick run is one backtick (most inline text): they pair up in order, and an
        # odd last one stays text. What _split_at_runs() gives, without a match per run.
        parts = raw.split("`")
        pairs = (len(parts) - 1) // 2
        prose = " ".join([*parts[0 : 2 * pairs : 2], "`".join(parts[2 * pairs :])])
        return prose, [_strip_one_space(c) for c in parts[1 : 2 * pairs : 2]]
    return _split_at_runs(raw)


def _strip_one_space(content: str) -> str:
    # CommonMark strips one space on each side of a code span's content, unless it is all spaces.
    return content[1:-1] if content.startswith(" ") and content.endswith(" ") and content.strip() else content


def _split_at_runs(raw: str) -> tuple[str, list[str]]:
    spans: list[str] = []
    prose: list[str] = []
    pos = 0
    for start, end, content in _code_spans(raw):
        spans.append(_strip_one_space(content))
        prose.append(raw[pos:start] + " ")
        pos = end
    prose.append(raw[pos:])
    return "".join(prose), spans


# Each pattern stops at the next opener ([^[\]], [^<>], ...): without that, a line of 50,000
# unclosed `[` or `<` costs quadratic time.
_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()]*\)")
_LINK = re.compile(r"\[([^\[\]]+)\](?:\([^()]*\)|\[[^\[\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|mailto|ftp):[^<>\s]+)>")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>|<!--(?:(?!<!--).)*?-->", re.S)
_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")
_EMPHASIS = re.compile(r"\*+|~~|(?<![\w\\])_+|_+(?!\w)")


def _plain_prose(raw: str) -> str:
    # Each rule runs only when its first character is there: most prose has no markup at all.
    s = raw
    if "[" in s:
        s = _IMAGE.sub(r"\1", s) if "![" in s else s
        s = _LINK.sub(r"\1", s)
    if "<" in s:
        s = _AUTOLINK.sub(r"\1", s)
        s = _TAG.sub("", s)
    if "*" in s or "_" in s or "~" in s:
        s = _EMPHASIS.sub("", s)
    if "\\" in s:
        s = _ESCAPE.sub(r"\1", s)
    return html.unescape(s) if "&" in s else s


def plain_inline(raw: str) -> str:
    """Raw inline markdown → readable plain text (links keep their text, code spans their content)."""
    if "`" not in raw:
        return _plain_prose(raw)
    out: list[str] = []
    pos = 0
    for start, end, content in _code_spans(raw):
        out.append(_plain_prose(raw[pos:start]))
        out.append(content.strip() if content.strip() else content)
        pos = end
    out.append(_plain_prose(raw[pos:]))
    return "".join(out)


def parse_links(text: str) -> list[tuple[int, str]]:
    """(0-based line, target) of every link and image in a document, reference links resolved.

    The same block parser as parse_blocks(), then each inline token's links; the line is the
    block's first line plus the line breaks before the link.
    """
    env: dict[str, Any] = {}
    inlines: list[tuple[int, str]] = []  # (line, raw inline content); cells of a row are one token

    def keep(tokens: list[Token]) -> None:
        for tok in tokens:
            if tok.type == "inline" and tok.map:
                inlines.append((tok.map[0], tok.content))
            elif tok.type == "tr_open" and tok.map:
                inlines.extend((tok.map[0], content) for _, content in tok.meta.get("cells", ()))

    # Streamed, as the build parses: a table bomb's cell tokens took over a GB (issue #16). The
    # inline pass waits for the whole document: a reference may be defined after its link.
    stream_blocks(text, keep, env)
    out: list[tuple[int, str]] = []
    for first_line, content in inlines:
        line = first_line
        for inline in _inline_parser().parseInline(content, env):
            for child in inline.children or []:
                if child.type in ("softbreak", "hardbreak"):
                    line += 1
                elif child.type in ("link_open", "image"):
                    target = child.attrGet("href" if child.type == "link_open" else "src")
                    if isinstance(target, str):
                        out.append((line, target))
    return out


def inline_comment_spans(raw: str) -> list[tuple[int, int]]:
    """[from, to) of each HTML comment in inline text (a paragraph's), as markdown-it's inline
    rules read it, left to right: a `<!--` that a code span holds, an escaped one (`\\<!--`) or one
    never closed is text. Linear time (code spans paired as _code_spans pairs them)."""
    if "<!--" not in raw:
        return []
    code = _code_spans(raw) if "`" in raw else []
    spans: list[tuple[int, int]] = []
    dead: set[int] = set()  # where a failed comment's pieces started: a later one that gets there fails too
    at, c = 0, 0
    while (begin := raw.find("<!--", at)) >= 0:
        # (the code spans closed before it, or opened inside what came before, are past)
        while c < len(code) and (code[c][0] < at or code[c][1] <= begin):
            c += 1
        if c < len(code) and code[c][0] < begin:  # a code span holds it: text
            at = code[c][1]
            c += 1
            continue
        back = begin
        while back > 0 and raw[back - 1] == "\\":
            back -= 1
        if (begin - back) % 2:  # escaped: text
            at = begin + 1
            continue
        stop = _comment_end(raw, begin, dead)
        if stop < 0:  # not closed: text, and markdown-it tries the next `<`
            at = begin + 1
            continue
        spans.append((begin, stop))
        at = stop
    return spans


def _comment_end(raw: str, begin: int, dead: set[int]) -> int:
    """Where the comment that opens at `begin` ends, by markdown-it's pattern (common.html_re):
    `<!-->`, `<!--->`, or `<!--` and pieces - a character other than `-`, `-` and one other than
    `-`, or `--` and one other than `>` - up to `-->`; -1 when none does. One pass, jumping from
    one `-` to the next; the `-`s a failed pass stood on go into `dead` (a pass from there fails
    the same way), so the `<!--`s of one paragraph cost one pass over it, not one each."""
    if raw.startswith(">", begin + 4) or raw.startswith("->", begin + 4):
        return begin + 5 if raw[begin + 4] == ">" else begin + 6
    i, n = begin + 4, len(raw)
    passed: list[int] = []
    while (i := raw.find("-", i)) >= 0 and i not in dead:
        passed.append(i)
        if i + 1 < n and raw[i + 1] != "-":
            i += 2
        elif i + 2 < n and raw[i + 1] == "-" and raw[i + 2] == ">":
            return i + 3
        elif i + 2 < n:
            i += 3
        else:
            break
    dead.update(passed)
    return -1


def comment_spans(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, int]]:
    """[from, to) of each HTML comment in text[start:end]; one never closed runs to `end`."""
    end = len(text) if end is None else end
    at = start
    while (begin := text.find("<!--", at, end)) >= 0:
        close = text.find("-->", begin + 2, end)  # begin + 2: "<!-->" and "<!--->" are whole comments
        at = end if close < 0 else close + 3
        yield begin, at


def without_comments(html: str) -> str:
    """`html` less its comments; one never closed runs to the end."""
    parts, at = [], 0
    for begin, stop in comment_spans(html):
        parts.append(html[at:begin])
        at = stop
    parts.append(html[at:])
    return "".join(parts)


def raw_html(text: str) -> list[str]:
    """The raw HTML of a document as a browser reads it: each HTML block and inline tag, less
    its comments; nothing from code blocks or code spans."""
    if "<" not in text:  # no tag, so no parse (mdfts check calls this on every file)
        return []
    env: dict[str, Any] = {}
    out: list[str] = []
    inlines: list[str] = []

    def keep(tokens: list[Token]) -> None:
        for tok in tokens:
            if tok.type == "html_block":
                out.append(without_comments(tok.content))
            elif tok.type == "inline" and "<" in tok.content:
                inlines.append(tok.content)
            elif tok.type == "tr_open":
                inlines.extend(content for _, content in tok.meta.get("cells", ()) if "<" in content)

    stream_blocks(text, keep, env)
    for content in inlines:
        for inline in _inline_parser().parseInline(content, env):
            out.extend(child.content for child in inline.children or ()
                       if child.type == "html_inline" and not child.content.startswith("<!--"))
    return out
