"""Block tokens → a Document of Sections: one per heading, plus the lead text before the first.

Splitter is the build's split stage (stream_blocks feeds it, strongest_sources is its token stage);
split_sections() and stream_sections() run parse, split and tokens on one text.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import math
import re
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before the standard library took it in
    import tomli as tomllib

from mdfts.errors import SourceError
from mdfts.parse import (
    TOML_FRONT_MATTER,
    Token,
    comment_spans,
    heading_attributes,
    inline_comment_spans,
    plain_inline,
    rendered_heading,
    slugify,
    split_code_spans,
    stream_blocks,
    without_comments,
)
from mdfts.tokens import ExactToken, keep_strongest, strongest_sources

if TYPE_CHECKING:
    from mdfts.artifact import TokenKind, TokenSource


@dataclass(frozen=True, slots=True)
class Section:
    path: str               # relative to the docs root, "/" separators
    ordinal: int            # position in the document, from 0
    level: int              # 1-6; 0 for the lead text before the first heading
    heading: str            # heading text, inline markup removed ("" for the lead section)
    trail: tuple[str, ...]  # heading texts from the top level down to this one
    anchor: str             # GitHub-style slug, "-1", "-2" for repeats ("" for the lead section)
    start_line: int         # 1-based, inclusive: the heading's own line
    end_line: int           # 1-based, inclusive: the line before the next heading, or the last line
    parent: int | None      # ordinal of the enclosing section
    body: str               # the section's markdown, heading line included (HTML comments cut)
    text: str               # plain text
    tokens: tuple[ExactToken, ...] = ()
    included: str | None = None  # the text of the files its include directives name (mdfts.includes)
    included_files: tuple[str, ...] = ()  # those files, relative to the root, in the order read


@dataclass(frozen=True, slots=True)
class Document:
    path: str
    title: str
    front_matter: dict[str, Any] = field(hash=False)  # compared, but a dict has no hash
    sha256: str
    size: int
    lines: int
    sections: tuple[Section, ...] = field(default_factory=tuple)
    n_sections: int = -1  # set by stream_sections(), whose Document has no `sections`

    def __post_init__(self) -> None:
        if self.n_sections < 0 or self.sections:
            object.__setattr__(self, "n_sections", len(self.sections))

    @property
    def front_matter_json(self) -> str:
        """The front matter as JSON with sorted keys: what the index stores."""
        # allow_nan=False: front matter is made JSON-ready when parsed; a NaN here is a bug.
        return json.dumps(self.front_matter, sort_keys=True, ensure_ascii=False, default=str, allow_nan=False)


def split_lines(text: str) -> list[str]:
    """Lines as an editor shows them: CRLF, CR and LF all end a line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class _Slugger:
    """github-slugger's rule: a repeated slug gets -1, -2, ...; a taken suffixed slug is skipped."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}

    def slug(self, title: str) -> str:
        base = slug = slugify(title)
        while slug in self.seen:
            self.seen[base] += 1
            slug = f"{base}-{self.seen[base]}"
        self.seen[slug] = 0
        return slug

    def take(self, anchor: str) -> str:
        """An anchor the document gives (`{#id}`): as written, and taken for the slugs after it."""
        self.seen.setdefault(anchor, 0)
        return anchor


# libyaml's loader when PyYAML has it: the same data as the pure-Python SafeLoader on every
# corpus we tried, at ~8x the speed (front matter was ~10% of some builds). On an error the pure
# loader runs again, for its error line (libyaml's can point past the last line).
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# Front matter is a few lines of metadata: anything deeper or bigger is hostile, and PyYAML's
# pure loader (the error-line fallback) and json.dumps recurse once per level.
MAX_FRONT_MATTER_DEPTH = 64
# What the data may weigh once aliases are expanded (nodes plus scalar characters) beyond twice
# the text: a 320-byte "billion laughs" of nine aliases a level expands 9^8-fold, and json.dumps
# writes every copy out.
FRONT_MATTER_ALIAS_ALLOWANCE = 100_000


def _check_yaml_shape(path: str, content: str) -> None:
    """Refuse front matter nested too deep, or whose aliases expand it past its allowance.

    One pass over libyaml's events (iterative, linear), before anything is built from them.
    A YAML syntax error is left to the loader, which names its line.
    """
    limit = 2 * len(content) + FRONT_MATTER_ALIAS_ALLOWANCE
    anchors: dict[str, int] = {}  # anchor → weight of the node it names, once closed
    stack: list[list[Any]] = [[None, 0]]  # open collections: [anchor, weight so far]
    total = 0
    try:
        for ev in yaml.parse(content, Loader=_FAST_LOADER):
            line = ev.start_mark.line + 2 if ev.start_mark is not None else 2  # +1 for the opening ---
            weight = 0
            if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                if len(stack) > MAX_FRONT_MATTER_DEPTH:
                    raise SourceError(path, line, f"front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels")
                stack.append([ev.anchor, 1])
                continue
            if isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                anchor, weight = stack.pop()
                if anchor is not None:
                    anchors[anchor] = weight
                stack[-1][1] += weight
                continue
            if isinstance(ev, yaml.ScalarEvent):
                weight = 1 + len(ev.value)
                if ev.anchor is not None:
                    anchors[ev.anchor] = weight
            elif isinstance(ev, yaml.AliasEvent):
                if ev.anchor not in anchors and any(f[0] == ev.anchor for f in stack):
                    raise SourceError(path, line, "front matter has a YAML alias inside its own anchor")
                weight = anchors.get(ev.anchor or "", 0)  # an undefined alias is the loader's error
            else:
                continue
            stack[-1][1] += weight
            total += weight
            if total > limit:
                raise SourceError(path, line, "front matter is too large once its YAML aliases are expanded")
    except yaml.YAMLError:
        return


def _json_key(key: Any) -> str:
    # json.dumps's own spelling of the keys it accepts; sort_keys needs one type.
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    return str(key)


def _json_ready(value: Any) -> Any:
    """`value` with every mapping key a str and non-finite floats as YAML spells them (".inf"):
    JSON has no Infinity or NaN, and json.dumps would write them anyway. Depth is bounded by
    _check_yaml_shape."""
    if isinstance(value, dict):
        return {_json_key(k): _json_ready(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else ".inf" if value > 0 else "-.inf"
    return value


def _load_yaml(path: str, content: str) -> Any:
    try:
        return yaml.load(content, Loader=_FAST_LOADER)
    except yaml.YAMLError:
        try:
            return yaml.load(content, Loader=yaml.SafeLoader)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            line = mark.line + 2 if mark is not None else 2  # +1 for 1-based, +1 for the opening ---
            raise SourceError(path, line, "front matter is not valid YAML") from None


_TOML_ERROR_LINE = re.compile(r"\(at line (\d+),")


def _load_toml(path: str, content: str) -> dict[str, Any]:
    """Hugo's TOML front matter. tomllib names the line in its message only. TOML has no aliases,
    so the data is no bigger than the text; its depth is bounded as YAML's is."""
    too_deep = SourceError(path, 2, f"front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels")
    try:
        data: dict[str, Any] = tomllib.loads(content)
    except tomllib.TOMLDecodeError as err:
        at = _TOML_ERROR_LINE.search(str(err))
        raise SourceError(path, int(at.group(1)) + 1 if at else 2, "front matter is not valid TOML") from None
    except RecursionError:  # tomllib recurses once a level
        raise too_deep from None
    except ValueError:  # int("1" * 5000): more digits than Python converts
        raise SourceError(path, 2, "front matter is not valid TOML (a value Python cannot convert)") from None
    level: list[Any] = [data]
    for _ in range(MAX_FRONT_MATTER_DEPTH):
        level = [v for c in level for v in (c.values() if isinstance(c, dict) else c)
                 if isinstance(v, (dict, list))]
        if not level:
            return data
    raise too_deep


def _front_matter(path: str, content: str, markup: str = "---") -> dict[str, Any]:
    if not content.strip():
        return {}
    if markup == TOML_FRONT_MATTER:
        toml: dict[str, Any] = _json_ready(_load_toml(path, content))
        return toml
    _check_yaml_shape(path, content)
    try:
        data = _load_yaml(path, content)
    except RecursionError:  # _check_yaml_shape bounds the depth; this is a last line of defence
        raise SourceError(path, 2, f"front matter nests deeper than {MAX_FRONT_MATTER_DEPTH} levels") from None
    except ValueError:  # int("1" * 5000): more digits than Python converts
        raise SourceError(path, 2, "front matter is not valid YAML (a value Python cannot convert)") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        kind = type(data).__name__
        article = "an" if kind[0] in "aeiou" else "a"
        raise SourceError(path, 2, f"front matter is not a mapping (it is {article} {kind})")
    ready: dict[str, Any] = _json_ready(data)
    return ready


_TAGS = re.compile(r"<[^<>]*>")  # [^<>]: a run of unclosed "<" stays linear


# The token stage as the splitter calls it: (source, text) pieces → {(token, kind): strongest source}.
_Extract = Callable[[list[tuple[str, str]]], "dict[tuple[str, TokenKind], TokenSource]"]


class Splitter:
    """Block tokens → sections, one top-level block at a time (stream_blocks' sink).

    A section is built and handed to `sink` as soon as the next heading closes it (markdown-it
    emits tokens in source order), so what is alive is one section's strings, never a whole
    document's tokens or sections: memory follows the largest section, not the file.
    """

    def __init__(self, path: str, text: str, sink: Callable[[Section, str], None], plain_text: bool,
                 extract: _Extract = strongest_sources) -> None:
        """:param extract: the token stage, (source, text) pieces → {(token, kind): strongest
            source} (strongest_sources; the build passes it timed). It runs as each section
            closes, and every _FLUSH_RUNS pieces of a long one, so a section's pieces never pile up."""
        self.path, self.text, self.sink, self.plain_text = path, text, sink, plain_text
        self.extract = extract
        # Offsets of line starts (CRLF and CR are already LF): 8 bytes a line, where a list of the
        # lines cost ~50 bytes a line on top of a second copy of the text.
        self.line_starts = array("q", [0])
        self.line_starts.extend(map(re.Match.end, _NEWLINE.finditer(text)))
        if text.endswith("\n"):
            self.line_starts.pop()  # no line after the last newline
        self.n_lines = len(self.line_starts) if text else 0
        self.front: dict[str, Any] = {}
        self.fm_title = ""
        self.h1 = ""  # the first non-empty level-1 heading
        self.lead_from: int | None = None  # 0-based first non-blank line after the front matter
        self.seen_first = False
        # The open section (None before the first): start line, level, raw heading, pieces, ...
        self.count = 0
        self.start = 0
        self.level = 0
        self.raw = ""
        self.open = False
        self.pieces: list[tuple[str, list[str]]] = []  # (source, texts) runs not yet made tokens
        # HTML comments' [from, to) offsets not yet cut (_body), in source order: 16 bytes a
        # comment, where a list of tuples took ~120 (a 50 MB file of `<!---->` lines is 6.5 million).
        self.cut_from, self.cut_to = array("q"), array("q")
        self.found: dict[tuple[str, TokenKind], TokenSource] = {}  # tokens extracted so far
        self.texts: list[str] = []
        self.slugger = _Slugger()
        self.stack: list[tuple[int, int, str]] = []  # (level, ordinal, heading) of open ancestors
        self.pending: list[Section] = []  # held until the title is known (see _emit)
        self.pending_chars = 0
        self.pending_heading = False
        self.parent_type = ""
        self.cell = 0  # 1-based column of the current table cell

    def offset(self, line: int) -> int:
        return self.line_starts[line] if line < self.n_lines else len(self.text)

    def _first_block(self, tok: Token) -> None:
        self.seen_first = True
        body_start = 0
        if tok.type == "front_matter" and tok.map:
            self.front = _front_matter(self.path, tok.content, tok.markup)
            body_start = tok.map[1]
            fm_title = self.front.get("title")
            if isinstance(fm_title, str) and fm_title.strip():
                self.fm_title = fm_title.strip()
        # Blank as CommonMark means it (spaces and tabs only): str.strip() also eats \x1c-\x1f
        # and U+00A0, which markdown treats as text, and a line of them would fall outside every section.
        self._lead_after(body_start)

    def _lead_after(self, line: int) -> None:
        """The lead text's first line: the first non-blank one from `line` on (None: none)."""
        at = self.offset(line)
        m = _NOT_BLANK.search(self.text, at)
        self.lead_from = None if m is None else line + self.text.count("\n", at, m.start())

    def _open(self, line: int, level: int) -> None:
        if self.open:
            self._close(line)
        self.open, self.start, self.level, self.raw = True, line, level, ""

    def _add_piece(self, source: str, text: str) -> None:
        runs = self.pieces
        if not source.startswith("code") and runs and runs[-1][0] == source:
            runs[-1][1].append(text)  # one run a source: joined by newlines, which no token spans
        else:
            runs.append((source, [text]))
            if len(runs) >= _FLUSH_RUNS:
                self._flush([])

    def _flush(self, head: list[tuple[str, str]]) -> None:
        """Turn the open section's pending pieces into exact tokens, merged into those found
        before: the tokens (de-duplicated) are far smaller than the strings they come from."""
        pieces = head + [(source, "\n".join(parts)) for source, parts in self.pieces]
        self.pieces = []
        best = self.found
        found = self.extract(pieces)
        if not best:
            self.found = found  # one batch (most sections): nothing to merge
            return
        keep_strongest(best, found.items())

    def _inline(self, content: str, first_cell: bool) -> None:
        if "`" not in content and not self.plain_text:  # prose alone (most inline text)
            source = "definition" if first_cell else "text"
            runs = self.pieces
            if runs and runs[-1][0] == source:
                runs[-1][1].append(content)
            else:
                self._add_piece(source, content)
            return
        prose, spans = split_code_spans(content)
        # Where a token is defined rather than mentioned: the first column of a table row,
        # or a code span that opens a paragraph or list item (`- `X`: what it does`).
        opens = content.lstrip("*_ ").startswith("`")
        self._add_piece("definition" if first_cell else "text", prose)
        for i, span in enumerate(spans):
            self._add_piece("code:definition" if first_cell or (opens and i == 0) else "code", span)
        if self.plain_text:
            self.texts.append(plain_inline(content))

    def feed(self, tokens: list[Token]) -> None:
        if not self.seen_first and tokens:
            self._first_block(tokens[0])
        for tok in tokens:
            if self.pending_heading:
                self.pending_heading = False
                self.raw = tok.content
                continue  # a heading's inline: handled once, in _close()
            if tok.nesting == 1:
                self.parent_type = tok.type
                if tok.type == "tr_open":
                    self.cell = 0
                elif tok.type in ("td_open", "th_open"):
                    self.cell += 1
            if tok.type == "heading_open" and tok.map:
                if not self.open and self.lead_from is not None and self.lead_from < tok.map[0]:
                    self._open(self.lead_from, 0)  # the lead text before the first heading
                self._open(tok.map[0], int(tok.tag[1]))
                self.pending_heading = True
                continue
            if tok.type in _UNREAD and tok.map:
                if not self.open and self.lead_from is not None and self.lead_from >= tok.map[0]:
                    self._lead_after(tok.map[1])  # before any text: it opens no lead section
                continue
            if tok.type not in _LEAVES or not tok.map:
                continue  # containers (a quote opening on a heading's line) own no text
            rest = ""
            if tok.type == "html_block" and "<!--" in tok.content and not _RAW_TEXT.match(tok.content.lstrip(" ")):
                self._cut_comments(tok.map[0], tok.map[1], tok.content)
                rest = without_comments(tok.content)  # the block as rendered (no container markers)
                if not rest.strip():
                    if not self.open and self.lead_from is not None and self.lead_from >= tok.map[0]:
                        self._lead_after(tok.map[1])  # the lead text starts after it, if there is any
                    continue  # nothing a reader sees: it opens no lead section
            if not self.open:
                if self.lead_from is None or tok.map[0] < self.lead_from:
                    continue
                self._open(self.lead_from, 0)
            if tok.type == "tr_open":
                for column, content in tok.meta.get("cells", ()):
                    self._inline(content, column == 0)
            elif tok.type == "inline":
                content = tok.content
                if "<!--" in content and self.parent_type not in ("td_open", "th_open"):
                    content = self._cut_inline_comments(tok.map[0], tok.map[1], content)
                self._inline(content, self.parent_type in ("td_open", "th_open") and self.cell == 1)
            elif tok.type in ("fence", "code_block"):
                self._add_piece("fence", tok.content)
                if self.plain_text:
                    self.texts.append(tok.content.rstrip("\n"))
            elif tok.type == "html_block":
                stripped = _TAGS.sub(" ", rest or tok.content)
                self._add_piece("text", stripped)
                if self.plain_text:
                    self.texts.append(" ".join(stripped.split()))

    def _cut_comments(self, first: int, end: int, content: str) -> None:
        """Cut each comment of an HTML block (lines first..end-1, `content` as markdown-it read
        them) from the section's body (see _body), as parse.without_comments reads them: one never
        closed runs to the block's end. What markdown-it took off the front of a line (a quote's
        `> `, a list item's indent) is the container's, not the comment's, and stays: a comment's
        lines in a quote are still quote lines."""
        lines = content.split("\n")
        for begin, stop in comment_spans(self.text, self.offset(first), self.offset(end)):
            at = begin
            line = bisect.bisect_right(self.line_starts, begin)  # the line after the one `<!--` is on
            while line < end and (start := self.offset(line)) < stop:
                keep = self._container_prefix(start, lines[line - first] if line - first < len(lines) else "")
                if keep:  # else the cut runs on over the line break (_body keeps the breaks it spans)
                    self.cut_from.append(at)
                    self.cut_to.append(start)
                    at = start + keep
                line += 1
            self.cut_from.append(at)
            self.cut_to.append(stop)

    def _cut_inline_comments(self, first: int, end: int, content: str) -> str:
        """Cut each HTML comment of a paragraph's text (lines first..end-1, `content` as
        markdown-it read them) from the section's body, as markdown-it's inline rules read one
        (parse.inline_comment_spans), and return `content` without them, for the exact tokens:
        `Fire it <!-- TODO: GLAZE_MAX --> slowly` shows "Fire it  slowly". Each line of `content`
        is the end of its line of the file (markdown-it took a quote's `> ` or an indent off the
        front, and trailing spaces off the last); a comment over several lines keeps those
        fronts, as an HTML block's does. When a line cannot be found so, nothing is cut."""
        spans = inline_comment_spans(content)
        if not spans:
            return content
        lines = content.split("\n")
        if first + len(lines) > end:
            return content
        at_line: list[int] = []  # where each line of content starts in the file's text
        for i, read in enumerate(lines):
            start = self.offset(first + i)
            eol = self.text.find("\n", start)
            eol = len(self.text) if eol < 0 else eol
            line = self.text[start:eol]
            if not line.endswith(read):
                line = line.rstrip()
                if i < len(lines) - 1 or not line.endswith(read):
                    return content  # not as the file writes it (a tab widened): leave it whole
            at_line.append(start + len(line) - len(read))
        read_at = [0]  # where each line starts in content
        for read in lines[:-1]:
            read_at.append(read_at[-1] + len(read) + 1)

        def in_file(pos: int) -> tuple[int, int]:
            i = bisect.bisect_right(read_at, pos) - 1
            return i, at_line[i] + pos - read_at[i]

        kept, done = [], 0
        for begin, stop in spans:
            i, at = in_file(begin)
            j, until = in_file(stop - 1)
            for k in range(i + 1, j + 1):  # the lines it runs over keep their fronts
                self.cut_from.append(at)
                self.cut_to.append(self.offset(first + k))
                at = at_line[k]
            self.cut_from.append(at)
            self.cut_to.append(until + 1)
            kept.append(content[done:begin] + "\n" * content.count("\n", begin, stop))
            done = stop
        kept.append(content[done:])
        return "".join(kept)

    def _container_prefix(self, start: int, read: str) -> int:
        """How many characters at the front of the line at `start` markdown-it left out of `read`,
        its text of the line: a tab it widened into spaces leaves the line's own spaces counted too."""
        eol = self.text.find("\n", start)
        eol = len(self.text) if eol < 0 else eol
        if not self.text.endswith(read, start, eol):
            read = read.lstrip(" \t")
        return eol - start - len(read) if self.text.endswith(read, start, eol) else 0

    def _body(self, start: int, end: int) -> str:
        """The text of lines start..end-1, each HTML comment in its HTML blocks left out (its line
        breaks and its lines' quote markers kept, so the body's lines stay the file's): a reader
        never sees one, and the words of a commented-out paragraph are not what a section says.
        Without the last line's break, as "\n".join(lines[start:end])."""
        lo, hi = self.offset(start), self.offset(end)
        if hi > lo and self.text[hi - 1] == "\n":
            hi -= 1
        n = bisect.bisect_left(self.cut_from, hi)  # the comments that start before hi
        if not n:
            return self.text[lo:hi]
        cuts = zip(self.cut_from[:n], self.cut_to[:n], strict=True)
        del self.cut_from[:n], self.cut_to[:n]
        parts, at = [], lo
        for cut_from, cut_to in cuts:
            if cut_from < lo:
                continue  # before the section (a comment before the lead text): not its text
            parts.append(self.text[at:cut_from])
            parts.append("\n" * self.text.count("\n", cut_from, min(cut_to, hi)))
            at = min(cut_to, hi)
        parts.append(self.text[at:hi])
        return "".join(parts)

    def _close(self, end: int) -> None:
        """Build the open section (it ends before line `end`) and hand it on."""
        idx, start, level, raw = self.count, self.start, self.level, self.raw
        self.count += 1
        if level:
            raw, given = heading_attributes(raw)  # `## Install {#setup}`: markup, and the anchor
            rendered = rendered_heading(raw)
            heading = " ".join(rendered.split())
            # GitHub slugs the text as rendered: "a  b" is #a--b, a setext heading's line break is
            # dropped (#runsover), and only the ends are stripped.
            anchor = self.slugger.take(given) if given else self.slugger.slug(rendered.strip())
            stack = self.stack
            while stack and stack[-1][0] >= level:
                stack.pop()
            parent = stack[-1][1] if stack else None
            trail = tuple(h for _, _, h in stack) + (heading,)
            stack.append((level, idx, heading))
            if level == 1 and heading and not self.h1:
                self.h1 = heading
            head_pieces = [("heading", heading)]
            _, spans = split_code_spans(raw)
            head_pieces.extend(("code:heading", s) for s in spans)
            plain = [heading]
        else:
            heading, anchor, parent, trail, head_pieces, plain = "", "", None, (), [], []
        body = self._body(start, end)
        self._flush(head_pieces)
        best, texts = self.found, self.texts
        self.found, self.texts = {}, []
        self._emit(Section(
            path=self.path, ordinal=idx, level=level, heading=heading, trail=trail, anchor=anchor,
            start_line=start + 1, end_line=max(end, start + 1), parent=parent, body=body,
            text="\n".join(t for t in plain + texts if t.strip()) if self.plain_text else "",
            tokens=tuple(ExactToken(token, kind, best[token, kind]) for token, kind in sorted(best)),
        ))

    def title(self) -> str:
        """The document's title as far as known: front matter, else the first h1, else the file name."""
        if self.fm_title or self.h1:
            return self.fm_title or self.h1
        name = self.path.rsplit("/", 1)[-1]
        return name.rsplit(".", 1)[0] if "." in name else name

    def _emit(self, section: Section | None) -> None:
        # A section row carries its document's title, which the first h1 may still change: hold
        # sections until the title is known, or until they weigh _HOLD_CHARS (then the sink is told
        # the title so far, and that it may change; see IndexWriter.add).
        if section is not None:
            self.pending.append(section)
            self.pending_chars += len(section.body)
        if section is None or self.fm_title or self.h1 or self.pending_chars > _HOLD_CHARS:
            title = self.title()
            for s in self.pending:
                self.sink(s, title)
            self.pending, self.pending_chars = [], 0

    def finish(self, sha256: str, size: int) -> Document:
        """Close the last section; the document (its `sections` empty, `n_sections` counted)."""
        if not self.seen_first:
            self._first_block(Token("paragraph_open", "p", 1))
        if not self.open and self.lead_from is not None:
            self._open(self.lead_from, 0)  # lead text and no heading
        if self.open:
            self._close(self.n_lines)
        self._emit(None)
        return Document(self.path, self.title(), self.front, sha256, size, self.n_lines, n_sections=self.count)


_FLUSH_RUNS = 64  # pending pieces a section holds before they become tokens
_HOLD_CHARS = 1 << 20  # body text held back while the title is not yet known
_LEAVES = frozenset({"inline", "tr_open", "fence", "code_block", "html_block"})
# Blocks with no text a reader reads: a rule (`---` as a first line with no closing `---` is one,
# not front matter), a line of Hugo shortcodes. Alone before the first heading, no lead section.
_UNREAD = frozenset({"hr", "shortcode"})
# HTML blocks whose text is no markup (CommonMark's block type 1 but <pre>): a `<!--` in a script,
# a style sheet or a text area is text, not a comment.
_RAW_TEXT = re.compile(r"<(?:script|style|textarea)(?:[\s>]|$)", re.I)
_NEWLINE = re.compile("\n")
_NOT_BLANK = re.compile(r"[^ \t\n]")


def normalize_text(text: str) -> str:
    """The text the parse and split stages read: BOM dropped, CRLF and CR as LF (so line numbers
    are as an editor shows them)."""
    # A BOM is not text (discover drops it; callers passing their own text may not).
    return text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def split_sections(path: str, text: str, sha256: str = "", size: int = 0) -> Document:
    """Parse one document into its sections; line numbers refer to the file as an editor shows it."""
    sections: list[Section] = []
    doc = stream_sections(path, text, lambda s, _title: sections.append(s), sha256, size)
    return dataclasses.replace(doc, sections=tuple(sections))


def stream_sections(path: str, text: str, sink: Callable[[Section, str], None], sha256: str = "",
                    size: int = 0, *, plain_text: bool = True) -> Document:
    """split_sections() for the build: each section goes to `sink(section, title)` as soon as it is
    read, and the Document comes back at the end with `sections` empty and `n_sections` set.

    `title` is the document's title as known when the section is handed over; it differs from
    the Document's only in a long document whose first h1 comes late (its row must be corrected).

    :param plain_text: False leaves Section.text empty (the index computes it from the body).
    """
    norm = normalize_text(text)
    splitter = Splitter(path, norm, sink, plain_text)
    stream_blocks(norm, splitter.feed)
    return splitter.finish(sha256, size)
