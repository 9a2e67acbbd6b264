"""Prompt-ready context for a question: whole sections in a token budget that counts every byte printed.

Matches come first (best first), then parents and neighbours of the matches while they fit; the
blocks are grouped by document, in document order; what does not fit is listed once as omitted.
A match carries its rank (1 = best) in every layout, so a reader need not take the printed order
(document order) for the ranking.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol
from xml.sax.saxutils import quoteattr

from mdfts.errors import MdftsError
from mdfts.records import Hit

Format = Literal["xml", "markdown", "json"]
FORMATS: tuple[Format, ...] = ("xml", "markdown", "json")


class TokenCounter(Protocol):
    name: str

    def __call__(self, text: str) -> int: ...


class ByteCounter:
    """The estimate used when no tokenizer is installed: 4 bytes of UTF-8 a token, rounded up."""

    name = "bytes/4"

    def __call__(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 4)


class TiktokenCounter:
    def __init__(self, encoding: Any, name: str) -> None:
        self._encoding, self.name = encoding, name

    def __call__(self, text: str) -> int:
        return len(self._encoding.encode(text, disallowed_special=()))


_DEFAULT: list[TokenCounter] = []


def default_counter() -> TokenCounter:
    """tiktoken's o200k_base when tiktoken is installed and its encoding loads, else bytes/4."""
    if not _DEFAULT:
        counter: TokenCounter = ByteCounter()
        try:
            import tiktoken  # type: ignore[import-not-found]

            counter = TiktokenCounter(tiktoken.get_encoding("o200k_base"), "tiktoken/o200k_base")
        except Exception:  # not installed, or its encoding file cannot be fetched offline
            pass
        _DEFAULT.append(counter)
    return _DEFAULT[0]


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where the sections come from, printed with the block."""

    index: str
    version: str = ""
    commit: str = ""
    built_at: str = ""
    source: str = ""

    @classmethod
    def from_meta(cls, name: str, meta: dict[str, str]) -> Provenance:
        return cls(index=name, version=meta.get("artifact_version", ""), commit=meta.get("git_commit", ""),
                   built_at=meta.get("built_at", ""), source=meta.get("source", ""))


@dataclass(frozen=True, slots=True)
class Block:
    """One section in the context: a match, or the parent/previous/next of the match `of`."""

    hit: Hit
    role: str            # match, parent, previous, next
    order: int           # rank of the match it belongs to (1 = best): documents sort by it
    of_id: int | None = None
    cut_lines: int | None = None  # kept only the first N lines of a match too long to fit whole
    # The call that reads a cut match on from a line, as the front end names it (its hit, the line).
    read_on: Callable[[Hit, int], str] | None = field(default=None, compare=False)

    @property
    def end_line(self) -> int:
        if self.cut_lines is None:
            return self.hit.end_line
        return min(self.hit.end_line, self.hit.start_line + self.cut_lines - 1)

    @property
    def body(self) -> str:
        if self.cut_lines is None:
            return self.hit.body.rstrip("\n")
        lines = _first_lines(self.hit.body, self.cut_lines).rstrip("\n").split("\n")
        fences = sum(1 for line in lines if line.lstrip().startswith(("```", "~~~")))
        kept = "\n".join(lines).rstrip() + ("\n```" if fences % 2 else "")  # close a fence the cut opened
        go_on = self.read_on(self.hit, self.end_line + 1) if self.read_on else f"fetch {self.hit.ref}"
        return f"{kept}\n[… lines {self.end_line + 1}-{self.hit.end_line} cut for the budget; {go_on}]"


@dataclass(frozen=True, slots=True)
class Context:
    """The rendered block (`text`, exactly what is printed) and what went into it."""

    text: str
    format: Format
    budget: int
    used: int                   # tokens of `text` by `tokenizer`; never above `budget`
    tokenizer: str
    blocks: tuple[Block, ...]   # in printed order; [n] in the text is blocks[n-1]
    omitted: tuple[str, ...]    # refs left out for the budget
    question: str = ""
    provenance: Provenance = field(default_factory=lambda: Provenance(""))

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        """The JSON form `mdfts context --json` prints, for a context made with format="json".
        Another format has no JSON form of its own: its budget counted the xml or markdown text."""
        if self.format != "json":
            raise MdftsError(f"to_dict() reads a context made with format='json', not {self.format!r}")
        data: dict[str, Any] = json.loads(self.text)
        return data

    @property
    def hits(self) -> list[Hit]:
        """The sections in the block, in printed order."""
        return [b.hit for b in self.blocks]


def _ordered(blocks: Sequence[Block]) -> list[Block]:
    """Grouped by document (the document of the best match first; a document only included by
    another after it, as the site shows it in its place), in line order within it."""
    first: dict[str, int] = {}
    included: dict[str, bool] = {}
    for b in blocks:
        first[b.hit.path] = min(first.get(b.hit.path, b.order), b.order)
        included[b.hit.path] = included.get(b.hit.path, True) and b.role == "included"
    return sorted(blocks, key=lambda b: (first[b.hit.path], included[b.hit.path], b.hit.path, b.hit.start_line))


def _source(b: Block) -> str:
    return f"{b.hit.path}:{b.hit.start_line}-{b.end_line}"


def _role_text(b: Block, number: dict[int, int]) -> str:
    if b.role == "match":
        return "match"
    return f"{b.role} of [{number[b.of_id]}]" if b.of_id in number else b.role


def _rank(b: Block) -> int:
    """The search's rank of a match (1 = best)."""
    return b.hit.rank if b.hit.rank is not None else b.order


def _inexact(b: Block) -> bool:
    """A match that holds none of the identifiers the question names, as written (`Hit.exact`
    False): said in the block, as `mdfts search` marks it, so a model does not take another
    service's section for the one asked about."""
    return b.role == "match" and b.hit.exact is False


def _short(commit: str) -> str:
    return commit[:12]


def _omitted_text(omitted: Sequence[str], more: int) -> str:
    return ", ".join([*omitted, *([f"{more} more"] if more else [])])


_CLOSING_TAG = re.compile(r"</(documents?\b|document_content\b)", re.I)


def _xml(p: Provenance, budget: int, used: int, tokenizer: str, blocks: list[Block], omitted: Sequence[str],
         more: int, brief: bool) -> str:
    attrs = [("index", p.index)]
    if not brief:
        attrs += [(k, v) for k, v in (("version", p.version), ("commit", _short(p.commit))) if v]
    attrs += [("budget", str(budget)), ("used", str(used)), ("tokenizer", tokenizer)]
    out = ["<documents " + " ".join(f"{k}={quoteattr(v)}" for k, v in attrs) + ">"]
    number = {b.hit.id: n for n, b in enumerate(blocks, 1)}
    for n, b in enumerate(blocks, 1):
        role = _role_text(b, number)
        rank = f' rank="{_rank(b)}"' if b.role == "match" else ""
        rank += ' exact="false"' if _inexact(b) else ""
        out.append(f'<document index="{n}" ref={quoteattr(b.hit.ref)} role={quoteattr(role)}{rank}>')
        out.append(f"<source>{_esc(_source(b))}{' ' + _esc(b.hit.url) if b.hit.url else ''}</source>")
        out.append(f"<title>{_esc(b.hit.title)}</title>")
        # The body goes in as written (exact tokens untouched); only a closing tag of the block's
        # own (</document_content>, </document>, </documents>, in any case) is defused.
        body = _CLOSING_TAG.sub(r"<\\/\1", b.body)
        out.append(f"<document_content>\n{body}\n</document_content>")
        out.append("</document>")
    if omitted or more:
        listed = f" refs={quoteattr(','.join(omitted))}" if omitted else ""
        out.append(f'<omitted{listed}{f" more={quoteattr(str(more))}" if more else ""} reason="budget"/>')
    out.append("</documents>")
    return "\n".join(out) + "\n"


def _esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _markdown(p: Provenance, budget: int, used: int, tokenizer: str, blocks: list[Block], omitted: Sequence[str],
              more: int, brief: bool) -> str:
    where = p.index
    if not brief:
        extra = ", ".join(f"{k} {v}" for k, v in (("version", p.version), ("commit", _short(p.commit))) if v)
        where += f" ({extra})" if extra else ""
    noun = "section" if len(blocks) == 1 else "sections"
    out = [f"Context from {where}: {len(blocks)} {noun}, {used} of {budget} tokens ({tokenizer})."]
    number = {b.hit.id: n for n, b in enumerate(blocks, 1)}
    for n, b in enumerate(blocks, 1):
        role = _role_text(b, number)
        out.append("")
        what = f"match {_rank(b)}{', no exact match' if _inexact(b) else ''}" if b.role == "match" else role
        out.append(f"### [{n}] {b.hit.title} — {_source(b)} ({what})")
        if b.hit.url:
            out.append(f"Source: {b.hit.url}")
        out.append("")
        out.append(b.body)
    if omitted or more:
        out.append("")
        out.append("Omitted for the budget: " + _omitted_text(omitted, more))
    return "\n".join(out) + "\n"


def _json(p: Provenance, budget: int, used: int, tokenizer: str, blocks: list[Block], omitted: Sequence[str],
          more: int, brief: bool, question: str) -> str:
    number = {b.hit.id: n for n, b in enumerate(blocks, 1)}
    doc: dict[str, Any] = {"index": p.index}
    if not brief:
        built: int | str | None = int(p.built_at) if p.built_at.isdigit() else p.built_at or None
        doc.update(version=p.version, commit=p.commit, built_at=built, source=p.source)
    doc.update(question=question, budget=budget, used=used, tokenizer=tokenizer)
    doc["documents"] = [
        {
            "index": n, "id": b.hit.id, "ref": b.hit.ref, "path": b.hit.path,
            "start_line": b.hit.start_line, "end_line": b.end_line, "source": _source(b), "url": b.hit.url,
            "title": b.hit.title, "role": b.role, "of": number.get(b.of_id) if b.of_id is not None else None,
            "rank": b.hit.rank, "score": b.hit.score, "exact": b.hit.exact if b.role == "match" else None,
            "cut": b.cut_lines is not None, "body": b.body,
        }
        for n, b in enumerate(blocks, 1)
    ]
    doc["omitted"] = list(omitted)
    doc["omitted_more"] = more
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def render(fmt: Format, p: Provenance, budget: int, used: int, tokenizer: str, blocks: Sequence[Block],
           omitted: Sequence[str], more: int = 0, brief: bool = False, question: str = "") -> str:
    """The printed text: `omitted` refs listed, `more` counted; `brief` drops version and commit."""
    ordered = _ordered(blocks)
    if fmt == "xml":
        return _xml(p, budget, used, tokenizer, ordered, omitted, more, brief)
    if fmt == "markdown":
        return _markdown(p, budget, used, tokenizer, ordered, omitted, more, brief)
    return _json(p, budget, used, tokenizer, ordered, omitted, more, brief, question)


def _first_lines(text: str, n: int) -> str:
    """The first `n` lines of `text` (without the last one's line break), read no further."""
    end = -1
    for _ in range(n):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[:end]


_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$", re.M)
_NOT_BLANK = re.compile(r"\S")  # a character str.strip() keeps


def _heading_end(hit: Hit) -> tuple[int, int]:
    """(lines, characters) of the body's start that are its heading: one line for `# Title`,
    through the underline for a setext heading (`Title` over `-----`, maybe several lines)."""
    if hit.level == 0:
        return 0, 0
    body = hit.body
    first = body.find("\n")
    if body.lstrip(" ").startswith("#") or first < 0:
        return 1, len(body) if first < 0 else first + 1
    underline = _UNDERLINE.search(body, first + 1)
    if underline is None:
        return 1, first + 1
    end = body.find("\n", underline.end())
    return body.count("\n", 0, underline.start()) + 1, len(body) if end < 0 else end + 1


def _first_text_line(hit: Hit) -> int | None:
    """The 0-based line of the first non-blank line after the heading, if any."""
    lines, chars = _heading_end(hit)
    found = _NOT_BLANK.search(hit.body, chars)
    return None if found is None else lines + hit.body.count("\n", chars, found.start())


def _has_text(hit: Hit) -> bool:
    return _first_text_line(hit) is not None


def _shortest_cut(hit: Hit, n_lines: int) -> int:
    """The fewest lines, from 2 and below `n_lines`, a cut of `hit` may keep: its heading and at
    least one non-blank line after it; `n_lines` when no cut can. One pass over the body (a test
    of each number of lines split the body once a line: quadratic in the blank lines after the
    heading)."""
    first = _first_text_line(hit)
    return n_lines if first is None or first >= n_lines - 1 else max(2, first + 1)


def build_context(
    matches: Sequence[Hit],
    related: Callable[[Hit], Sequence[tuple[str, Hit]]],
    *,
    budget: int,
    fmt: Format = "xml",
    provenance: Provenance,
    question: str = "",
    count: TokenCounter | None = None,
    read_on: Callable[[Hit, int], str] | None = None,
) -> Context:
    """Choose and render the sections for a context block of at most `budget` tokens.

    Sections go in whole; only a match too long to fit whole may be cut at a line (keeping its
    heading and some text, and saying so). The omitted refs are listed in what room is left.

    :param matches: search hits, best first.
    :param related: (relation, hit) pairs of a match: its parent, previous and next sections,
        and (`included`) the sections of the files its include directives name, which go in
        before every other relative.
    :param read_on: the call that reads a cut match on from a line (`fetch REF` when None).
    """
    if fmt not in FORMATS:
        raise MdftsError(f"unknown context format {fmt!r}; use one of {', '.join(FORMATS)}")
    counter = count or default_counter()
    # A section with nothing but its heading adds nothing: its heading is in the trail of the
    # sections under it. It is neither printed nor listed.
    matches = [h for h in matches if _has_text(h)]
    relations = {h.id: [(r, o) for r, o in related(h) if _has_text(o)] for h in matches}
    # While choosing, the omitted trailer is priced as a count with three digits and no refs
    # listed: no larger than it can end up (candidates are at most a few dozen), and the same
    # whatever the relatives are, so they cannot change which matches fit.
    most = max(100, len({h.id for h in matches} | {o.id for rs in relations.values() for _, o in rs}))

    def text_of(blocks: Sequence[Block], omitted: Sequence[str], more: int, brief: bool, used: int) -> str:
        return render(fmt, provenance, budget, used, counter.name, blocks, omitted, more, brief, question)

    def fits(blocks: Sequence[Block], brief: bool) -> bool:
        # `used` printed as the budget has at least as many digits as the final figure.
        return counter(text_of(blocks, [], most, brief, budget)) <= budget

    def choose(brief: bool) -> tuple[list[Block], list[str]]:
        chosen: list[Block] = []
        omitted: list[str] = []
        seen: set[int] = set()

        def offer(block: Block, allow_cut: bool) -> bool:
            taken: Block | None = None
            if fits([*chosen, block], brief):
                taken = block
            elif allow_cut:
                n_lines = block.hit.body.rstrip("\n").count("\n") + 1
                lo = _shortest_cut(block.hit, n_lines)
                hi = n_lines - 1  # the largest number of lines that fits wins
                # Up from the shortest cut, doubling, to the first that does not fit; then the
                # bisection between: only cuts about the size of what fits are rendered and
                # counted, not half of a 20 MB section, then a quarter, ...
                step = 1
                while lo <= hi:
                    k = min(lo + step - 1, hi)
                    cut = Block(block.hit, block.role, block.order, block.of_id, k, read_on)
                    if not fits([*chosen, cut], brief):
                        hi = k - 1
                        break
                    taken, lo, step = cut, k + 1, step * 2
                while lo <= hi:
                    mid = (lo + hi) // 2
                    cut = Block(block.hit, block.role, block.order, block.of_id, mid, read_on)
                    if fits([*chosen, cut], brief):
                        taken, lo = cut, mid + 1
                    else:
                        hi = mid - 1
            seen.add(block.hit.id)
            if taken is None:
                omitted.append(block.hit.ref)
                return False
            chosen.append(taken)
            return True

        whole: list[tuple[int, Hit]] = []
        for rank, hit in enumerate(matches, 1):
            if hit.id not in seen and offer(Block(hit, "match", rank), allow_cut=True):
                if chosen[-1].cut_lines is None:
                    whole.append((rank, hit))
        # What a match's include directives name first (the site shows it in its place: an
        # include-only section's own text is the directive line), then the other relatives.
        for first in (True, False):
            for rank, hit in whole:
                for relation, other in relations[hit.id]:
                    if (relation == "included") == first and other.id not in seen:
                        offer(Block(other, relation, rank, hit.id), allow_cut=False)
        return chosen, omitted

    picked: tuple[list[Block], list[str], bool] | None = None
    for brief in (False, True):
        chosen, omitted = choose(brief)
        if not fits(chosen, brief):
            continue
        top_in = not matches or any(b.hit.id == matches[0].id for b in chosen)
        if picked is None or top_in:
            picked = (chosen, omitted, brief)
        if top_in:
            break
    if picked is None:
        floor = counter(text_of([], [], most, True, budget))
        tokens = "token" if budget == 1 else "tokens"
        raise MdftsError(f"a budget of {budget} {tokens} cannot hold even an empty context block "
                         f"({floor} tokens by {counter.name}); give a larger budget")
    chosen, omitted, brief = picked
    # List as many omitted refs as the room left allows (in order: matches, then relatives); count
    # the rest. Listing none always fits: the count was priced at its largest while choosing.
    shown = 0
    while shown < len(omitted) and counter(text_of(chosen, omitted[: shown + 1], len(omitted) - shown - 1,
                                                   brief, budget)) <= budget:
        shown += 1
    listed, more = omitted[:shown], len(omitted) - shown
    # The figure is part of what it counts. Printed as the budget it fits; each lower figure has
    # no more digits, so the count never rises and settles within a few rounds (always <= budget).
    used = budget
    text = text_of(chosen, listed, more, brief, used)
    for _ in range(8):
        actual = counter(text)
        if actual == used:
            break
        used = actual
        text = text_of(chosen, listed, more, brief, used)
    return Context(
        text=text, format=fmt, budget=budget, used=used, tokenizer=counter.name,
        blocks=tuple(_ordered(chosen)), omitted=tuple(omitted), question=question, provenance=provenance,
    )
