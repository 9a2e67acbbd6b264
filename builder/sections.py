"""Markdown text → a Document of Sections: one per heading, plus the lead text before the first."""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import yaml

from mdfts.errors import SourceError
from mdfts.parse import heading_text, parse_blocks, plain_inline, slugify, split_code_spans
from mdfts.tokens import ExactToken, extract_tokens


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
    body: str               # the section's markdown, heading line included
    text: str               # plain text
    tokens: tuple[ExactToken, ...] = ()


@dataclass(frozen=True, slots=True)
class Document:
    path: str
    title: str
    front_matter: dict[str, Any]
    sha256: str
    size: int
    lines: int
    sections: tuple[Section, ...] = field(default_factory=tuple)

    @property
    def front_matter_json(self) -> str:
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
                weight = anchors.get(ev.anchor, 0)  # an undefined alias is the loader's error
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


def _front_matter(path: str, content: str) -> dict[str, Any]:
    if not content.strip():
        return {}
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
        raise SourceError(path, 2, f"front matter is not a mapping (it is a {type(data).__name__})")
    ready: dict[str, Any] = _json_ready(data)
    return ready


_TAGS = re.compile(r"<[^<>]*>")  # [^<>]: a run of unclosed "<" stays linear


def split_sections(path: str, text: str, sha256: str = "", size: int = 0) -> Document:
    """Parse one document into its sections; line numbers refer to the file as an editor shows it."""
    # A BOM is not text (discover drops it; callers passing their own text may not).
    norm = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = split_lines(norm)
    blocks = parse_blocks(norm)

    front: dict[str, Any] = {}
    body_start = 0  # 0-based first line after the front matter
    heads: list[tuple[int, int, str]] = []  # (0-based line, level, raw inline content)
    for i, tok in enumerate(blocks):
        if tok.type == "front_matter" and tok.map:
            front = _front_matter(path, tok.content)
            body_start = tok.map[1]
        elif tok.type == "heading_open" and tok.map:
            heads.append((tok.map[0], int(tok.tag[1]), blocks[i + 1].content))

    # Section line ranges: [start, end) 0-based.
    starts: list[tuple[int, int, str]] = []
    first_head = heads[0][0] if heads else len(lines)
    # Blank as CommonMark means it (spaces and tabs only): str.strip() also eats \x1c-\x1f and
    # U+00A0, which markdown treats as text, and a line of them would fall outside every section.
    if any(line.strip(" \t") for line in lines[body_start:first_head]):
        lead_from = body_start
        while lead_from < first_head and not lines[lead_from].strip(" \t"):
            lead_from += 1
        starts.append((lead_from, 0, ""))
    starts.extend(heads)

    # Leaf content per section, for plain text and exact tokens.
    pieces: list[list[tuple[str, str]]] = [[] for _ in starts]
    texts: list[list[str]] = [[] for _ in starts]
    start_lines = [s for s, _, _ in starts]
    parent_type = ""
    cell = 0  # 1-based column of the current table cell
    for tok in blocks:
        if tok.nesting == 1:
            parent_type = tok.type
            if tok.type == "tr_open":
                cell = 0
            elif tok.type in ("td_open", "th_open"):
                cell += 1
        if not tok.map or not starts or tok.map[0] < starts[0][0]:
            continue
        idx = bisect_right(start_lines, tok.map[0]) - 1
        if tok.type == "inline":
            if parent_type == "heading_open":
                continue  # headings are handled below, once each
            prose, spans = split_code_spans(tok.content)
            # Where a token is defined rather than mentioned: the first column of a table row,
            # or a code span that opens a paragraph or list item (`- `X`: what it does`).
            first_cell = parent_type in ("td_open", "th_open") and cell == 1
            opens = tok.content.lstrip("*_ ").startswith("`")
            pieces[idx].append(("definition" if first_cell else "text", prose))
            pieces[idx].extend(
                ("code:definition" if first_cell or (opens and i == 0) else "code", span)
                for i, span in enumerate(spans)
            )
            texts[idx].append(plain_inline(tok.content))
        elif tok.type in ("fence", "code_block"):
            pieces[idx].append(("fence", tok.content))
            texts[idx].append(tok.content.rstrip("\n"))
        elif tok.type == "html_block":
            stripped = _TAGS.sub(" ", tok.content)
            pieces[idx].append(("text", stripped))
            texts[idx].append(" ".join(stripped.split()))

    slugger = _Slugger()
    sections: list[Section] = []
    stack: list[tuple[int, int]] = []  # (level, ordinal)
    title = ""
    for idx, (start, level, raw) in enumerate(starts):
        end = starts[idx + 1][0] if idx + 1 < len(starts) else len(lines)
        if level:
            heading = heading_text(raw)
            anchor = slugger.slug(heading)
            while stack and stack[-1][0] >= level:
                stack.pop()
            parent = stack[-1][1] if stack else None
            trail = tuple(sections[o].heading for _, o in stack) + (heading,)
            stack.append((level, idx))
            if level == 1 and not title:
                title = heading
            head_pieces = [("heading", heading)]
            _, spans = split_code_spans(raw)
            head_pieces.extend(("code:heading", s) for s in spans)
            plain = [heading]
        else:
            heading, anchor, parent, trail, head_pieces, plain = "", "", None, (), [], []
        body = "\n".join(lines[start:end])
        sections.append(
            Section(
                path=path, ordinal=idx, level=level, heading=heading, trail=trail, anchor=anchor,
                start_line=start + 1, end_line=max(end, start + 1), parent=parent, body=body,
                text="\n".join(t for t in plain + texts[idx] if t.strip()),
                tokens=tuple(extract_tokens(head_pieces + pieces[idx])),
            )
        )

    fm_title = front.get("title")
    if isinstance(fm_title, str) and fm_title.strip():
        title = fm_title.strip()
    if not title:
        name = path.rsplit("/", 1)[-1]
        title = name.rsplit(".", 1)[0] if "." in name else name
    return Document(path, title, front, sha256, size, len(lines), tuple(sections))
